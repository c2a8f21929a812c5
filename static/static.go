// Package static holds the page's assets (CSS, vendored htmx and its websocket
// extension, icons, manifest, scripts), embedded so the binary serves them.
package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"sync"
)

//go:generate go run ./icons/gen.go -out icons

//go:embed *.css *.js *.webmanifest vendor/htmx/* vendor/htmx-ext-ws/* icons/*.png icons/*.svg
var files embed.FS

// FS returns the embedded assets, rooted at this directory ("app.css",
// "vendor/htmx/htmx.min.js", …).
func FS() fs.FS { return files }

// Scripts lists the scripts every page loads, in order. The Web Push helper's
// push.js is included when it is present, so adding the file is all it takes.
func Scripts() []string {
	s := []string{"vendor/htmx/htmx.min.js", "vendor/htmx-ext-ws/ws.min.js", "app.js", "batch.js"}
	if _, err := fs.Stat(files, "push.js"); err == nil {
		s = append(s, "push.js")
	}
	return s
}

// Hashes returns a short content hash per file; URLs carry it as ?v= so a
// browser may cache them for good and still sees a new build at once.
func Hashes() (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p] = hex.EncodeToString(sum[:6])
		return nil
	})
	return out, err
}

// gzipped holds each text asset gzipped at the best level, made once per
// process: the assets never change while it runs, so no request pays for
// compressing them. Files that gzip would not shrink by a tenth are left out.
var gzipped = sync.OnceValues(func() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch path.Ext(p) {
		case ".css", ".js", ".svg", ".webmanifest":
		default:
			return nil // PNGs are compressed already
		}
		raw, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return err
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		if buf.Len() < len(raw)*9/10 {
			out[p] = buf.Bytes()
		}
		return nil
	})
	return out, err
})

// Gzipped returns the asset name gzipped, when it has a gzipped form.
func Gzipped(name string) ([]byte, bool) {
	m, err := gzipped()
	if err != nil {
		return nil, false
	}
	b, ok := m[name]
	return b, ok
}
