package gitstore

// syncDir is a no-op on Windows: directories cannot be fsynced there, and
// NTFS journals renames itself.
func syncDir(string) error { return nil }
