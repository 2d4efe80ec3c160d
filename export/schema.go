package export

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of the case format named by
// SchemaID. It ships in the binary so that tools can check a case file
// without the source tree.
//
//go:embed schema.json
var Schema []byte

// HistorySchema is the JSON Schema (draft 2020-12) of one line of the
// history format read by replaylab check.
//
//go:embed history.schema.json
var HistorySchema []byte
