package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/replaylab/replaylab/missions"
)

// MissionDigest names a mission by what it holds, not by its id: two
// missions with one digest run alike.
func MissionDigest(m *missions.Mission) string {
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
