package mcpserver

import (
	"net/http"
	"time"
)

// Prepare exposes prepare to the external tests.
var Prepare = prepare

// LimitConcurrency exposes the concurrency limit of the HTTP front end.
func LimitConcurrency(next http.Handler, n int, wait time.Duration) http.Handler {
	return limitConcurrency(next, n, wait)
}
