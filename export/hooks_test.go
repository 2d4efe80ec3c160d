package export

// ScanCaseForTest runs the schema walk alone: whether data fits the case
// schema, and where the first problem is when it does not.
func ScanCaseForTest(data []byte) (fits bool, syntax bool, err error) {
	s, err := scanCase(data)
	return !(s.hasIssue || s.hasKey || s.syntax), s.syntax, err
}
