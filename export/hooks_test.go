package export

// ScanCaseForTest runs the schema walk alone: whether data fits the case
// schema, and where the first problem is when it does not.
func ScanCaseForTest(data []byte) (fits bool, syntax bool, err error) {
	schema, err := caseSchema()
	if err != nil {
		return false, false, err
	}
	s := schema.Scan(data)
	return s.Fits(), s.Syntax(), nil
}
