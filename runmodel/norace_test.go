//go:build !race

package runmodel

// raceSlowdown widens timing bounds under the race detector.
const raceSlowdown = 1
