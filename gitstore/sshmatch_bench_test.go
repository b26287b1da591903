package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSSHConfigCheckManyMatch is the check of a fetch's ssh
// configuration (SSHConfig.Check) with many Match blocks, none applying:
// linear in the blocks (before session 30 each block's verdict looked its
// stand-in up among all the Match blocks: 32,000 blocks took 7.8 s).
func BenchmarkSSHConfigCheckManyMatch(b *testing.B) {
	for _, n := range []int{1000, 4000, 32000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			home := b.TempDir()
			b.Setenv("HOME", home)
			if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
				b.Fatal(err)
			}
			var sb strings.Builder
			sb.WriteString("Host git.example.test\n  User git\n")
			for i := range n {
				fmt.Fprintf(&sb, "Match host h%d\nUser u\n", i)
			}
			if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(sb.String()), 0o600); err != nil {
				b.Fatal(err)
			}
			c := ReadSSHConfig()
			if err := c.Check("git.example.test"); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := c.Check("git.example.test"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
