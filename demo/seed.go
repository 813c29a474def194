package demo

// DefaultSeed is the scenario vigil demo plays unless --seed says
// otherwise; the README's screenshots are drawn from it too, so they show
// the demo a newcomer gets.
const DefaultSeed int64 = 1

// TemporaryLabel is how the explorer's status bar names the store vigil
// demo makes and removes (the screenshots show what the demo shows).
const TemporaryLabel = "demo (temporary store)"
