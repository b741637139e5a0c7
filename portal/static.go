package portal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/gorilla/mux"
)

// assets maps each static file's name (portal.css) to the name it is
// served under, with the first 12 hex digits of its SHA-256 before the
// extension (portal.3f1c…9a.css), and that name to its content. A change
// to a file changes its address, so browsers may keep each one for a year.
type assets struct {
	hashed map[string]string // portal.css -> portal.<hash>.css
	files  map[string][]byte // portal.<hash>.css -> content
}

// staticAssets are the embedded static files, hashed once at start.
var staticAssets = loadAssets()

func loadAssets() *assets {
	a := &assets{hashed: map[string]string{}, files: map[string][]byte{}}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(staticFS, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		name := path.Base(p)
		ext := path.Ext(name)
		h := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		a.hashed[name], a.files[h] = h, body
		return nil
	})
	if err != nil {
		panic(err)
	}
	return a
}

// path is the address templates use for a static file (their "asset"
// function); a name with no file fails the page's rendering.
func (a *assets) path(name string) (string, error) {
	h, ok := a.hashed[name]
	if !ok {
		return "", fmt.Errorf("portal: no static file %q", name)
	}
	return "/portal/static/" + h, nil
}

// serve answers a content-addressed name with the file, cacheable for a
// year and immutable; any other name (unhashed, an old or a wrong hash) is
// the portal's 404, so a stale page never gets today's file under
// yesterday's name cached for a year.
func (p *Portal) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["file"]
	body, ok := staticAssets.files[name]
	if !ok {
		p.message(w, r, http.StatusNotFound, "Page not found",
			"The portal has no file at this address. Reload the page that asked for it.")
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
}
