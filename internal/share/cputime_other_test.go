//go:build !unix

package share

import "time"

func cpuTime() time.Duration { return 0 }
