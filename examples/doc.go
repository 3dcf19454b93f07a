// Package examples holds runnable sweep scripts (*.star, with shared modules
// under lib/). Each file opens with a comment saying what it measures and how
// to run it, e.g.
//
//	aiperf sweep examples/concurrency.star --set url=http://127.0.0.1:8000
//
// The package's tests load and plan every script, so an example that stops
// loading, or whose cells stop validating, fails `go test`.
package examples
