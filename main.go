// Command vigil is a terminal explorer for durable AI-agent runs.
package main

import "fmt"

func main() {
	fmt.Println("vigil: under construction")
}
