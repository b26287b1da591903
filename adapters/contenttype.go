package adapters

import (
	"mime"
	"net/http"
	"path"
	"strings"
)

// extTypes maps file extensions to the content type recorded for them. The
// table is ours (not the system's mime.types) so a snapshot's content type
// does not depend on the machine that fetched it.
var extTypes = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".txt":      "text/plain",
	".text":     "text/plain",
	".rst":      "text/x-rst",
	".adoc":     "text/asciidoc",
	".html":     "text/html",
	".htm":      "text/html",
	".csv":      "text/csv",
	".tsv":      "text/tab-separated-values",
	".json":     "application/json",
	".jsonl":    "application/jsonl",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".xml":      "application/xml",
	".pdf":      "application/pdf",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".webp":     "image/webp",
	".svg":      "image/svg+xml",
}

// typeByName returns the content type for a file name's extension, or "".
func typeByName(name string) string {
	return extTypes[strings.ToLower(path.Ext(name))]
}

// contentType picks the type for content read from name: the extension's
// type when known, else what http.DetectContentType sniffs.
func contentType(name string, content []byte) string {
	if t := typeByName(name); t != "" {
		return t
	}
	return http.DetectContentType(content)
}

// httpContentType picks the type for an HTTP body: the server's
// Content-Type, except that a missing or generic one (application/octet-stream,
// text/plain) gives way to the URL path's extension when that is known, since
// many servers (raw file hosts among them) label every file text/plain.
func httpContentType(header, urlPath string, content []byte) string {
	header = strings.TrimSpace(header)
	media, _, err := mime.ParseMediaType(header)
	if header == "" || err != nil || media == "application/octet-stream" || media == "text/plain" {
		if t := typeByName(urlPath); t != "" {
			return t
		}
	}
	if header == "" || err != nil {
		return http.DetectContentType(content)
	}
	return header
}
