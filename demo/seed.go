package demo

// DefaultSeed is the scenario vigil demo plays unless --seed says
// otherwise; the README's screenshots are drawn from it too, so they show
// the demo a newcomer gets.
const DefaultSeed int64 = 1
