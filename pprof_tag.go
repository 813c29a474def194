//go:build vigilpprof

package main

// Built with -tags vigilpprof (serve's load bench does, when asked to
// profile), vigil serves net/http/pprof on $VIGIL_PPROF: the bench's
// profile of the real server under its load. Never in a release build.

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	if addr := os.Getenv("VIGIL_PPROF"); addr != "" {
		go http.ListenAndServe(addr, nil)
	}
}
