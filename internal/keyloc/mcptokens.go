package keyloc

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyfile"
)

// MCPTokensEnv names the token file of `readproof mcp --http`.
const MCPTokensEnv = "READPROOF_MCP_TOKENS"

// MCPTokensPath picks the MCP token file: given (a --tokens flag), then
// READPROOF_MCP_TOKENS, then $XDG_CONFIG_HOME/readproof/mcp-tokens.json. It
// returns the absolute path and where it came from. The file is held to the
// key-file policy (internal/keyfile): outside the store, the project and
// every git repository, mode 0600.
func MCPTokensPath(given string) (path, from string, err error) {
	var p string
	switch {
	case given != "":
		p, from = given, "--tokens"
	case os.Getenv(MCPTokensEnv) != "":
		p, from = os.Getenv(MCPTokensEnv), MCPTokensEnv
	default:
		d, err := keyfile.DefaultPath("mcp-tokens.json")
		if err != nil {
			return "", "", hint.With(fmt.Errorf("locating the MCP token file: %w", err), "name it with --tokens PATH or "+MCPTokensEnv)
		}
		p, from = d, "the default location"
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", "", fmt.Errorf("MCP token file %q (from %s): %w", p, from, err)
	}
	return abs, from, nil
}
