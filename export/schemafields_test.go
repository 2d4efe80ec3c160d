package export

import (
	"reflect"
	"testing"
)

// TestSchemaHasTheCaseFields: a case is decoded without the decoder's
// check for unknown fields, because the schema walk refuses any key the
// schema lacks. That holds only if every closed object of the schema has
// exactly the fields of the Go type it decodes into.
func TestSchemaHasTheCaseFields(t *testing.T) {
	walk, err := caseSchema()
	if err != nil {
		t.Fatal(err)
	}
	problems, checked := walk.MatchType(reflect.TypeFor[document](), "case")
	for _, p := range problems {
		t.Error(p)
	}
	if checked < 15 {
		t.Fatalf("only %d objects compared; the walk lost its way", checked)
	}
}
