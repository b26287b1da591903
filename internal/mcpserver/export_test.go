package mcpserver

// Prepare exposes prepare to the external tests.
var Prepare = prepare
