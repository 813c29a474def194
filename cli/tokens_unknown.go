package cli

// knownTokens is a step's count, nil when the store recorded none: printed
// as "not reported" and written as JSON null, never as a 0.
func knownTokens(n int64, unknown bool) *int64 {
	if unknown {
		return nil
	}
	return &n
}
