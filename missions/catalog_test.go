package missions

import (
	"fmt"
	"testing"
)

// TestCatalogExpectations runs every built-in mission under every setting its
// file lists and checks the outcome the file promises.
func TestCatalogExpectations(t *testing.T) {
	cat := BuiltIn()
	if len(cat.Missions) == 0 {
		t.Fatal("the built-in catalog is empty")
	}
	for _, m := range cat.Missions {
		for _, e := range m.Expect {
			t.Run(fmt.Sprintf("%s/%s", m.ID, e.When), func(t *testing.T) {
				c, err := Run(m, m.Settings(e.When))
				if err != nil {
					t.Fatal(err)
				}
				if err := Check(c, e); err != nil {
					t.Errorf("%s:%d: %v", m.Source, e.Line, err)
				}
			})
		}
	}
}
