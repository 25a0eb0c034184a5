// Command hello is the start-up floor of the benchmark table (bench/table):
// a Go binary that prints one line and exits.
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
