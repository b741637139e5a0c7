package portal_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/openlayer-ai/workspace-service/harness/testtool"
)

// browser is one headless Chromium tab on the portal.
type browser struct {
	t       *testing.T
	ctx     context.Context
	base    string // the API's scheme and host, where /portal/ is served
	shots   string // where screenshots go
	dialogs atomic.Int32
}

// chromiumFlags are the flags the browser tests launch Chromium with:
// headless, no sandbox (containers run as root), nothing fetched from the
// network but the pages under test.
func chromiumFlags(path, userDataDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(userDataDir),
		chromedp.WindowSize(1280, 900),
	}
}

// newBrowser starts Chromium for t; a missing chromium is testtool's rule.
func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		testtool.Missing(t, fmt.Errorf("the browser tests need Debian's chromium (apt-get install chromium): %w", err))
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromiumFlags(path, t.TempDir())...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: base, shots: screenshotDir(t)}
	// Starts the browser, then counts every dialog a page opens (an
	// injected alert(1) would be one) and dismisses it.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			b.dialogs.Add(1)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return b
}

// screenshotDir is bin/portal at the module's root.
func screenshotDir(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	out := filepath.Join(dir, "bin", "portal")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser at %s: %v", b.location(), err)
	}
}

// open navigates to a path of the portal (or an absolute URL).
func (b *browser) open(path string) {
	b.t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = b.base + path
	}
	b.do(chromedp.Navigate(path))
}

// openLink opens a minted link: its page spends nothing until the person
// presses its button ("Continue", or "Open …" when the browser holds
// another workspace's session), which opens the portal.
func (b *browser) openLink(link string) {
	b.t.Helper()
	b.open(link)
	b.waitFor(`document.querySelector('main form[action="/portal/open"] button') !== null`, 10*time.Second)
	b.submit(`main form[action="/portal/open"] button`)
}

// submit clicks a button or link that loads a page and waits for it.
func (b *browser) submit(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		b.t.Fatalf("clicking %s at %s: %v", sel, b.location(), err)
	}
	b.waitFor(`document.readyState === "complete"`, 10*time.Second)
}

func (b *browser) location() string {
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		return "(unknown: " + err.Error() + ")"
	}
	return loc
}

func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluating %s at %s: %v", js, b.location(), err)
	}
	return v
}

// text is the text of the first element sel matches.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return eval[string](b, `(document.querySelector(`+jsString(sel)+`) || {textContent: ""}).textContent.trim()`)
}

func jsString(s string) string { return "`" + strings.ReplaceAll(s, "`", "\\`") + "`" }

// waitFor evaluates js until it is true; navigations in between are fine.
func (b *browser) waitFor(js string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			main, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(document.querySelector("main") || document.body).innerText`))
			b.t.Fatalf("waited %v at %s for %s (last error %v); the page reads:\n%s", timeout, b.location(), js, err, main)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reloadUntil reloads the page until js is true: deliveries arrive from the
// worker, and the page shows them when loaded.
func (b *browser) reloadUntil(js string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b.do(chromedp.Reload())
		if eval[bool](b, js) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("reloaded %s for %v and %s stayed false", b.location(), timeout, js)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// shot saves a screenshot of the whole page as bin/portal/<name>.png.
// A page still laying out (seen under load: "Cannot take screenshot with
// 0 width") gets a few more tries; the screenshot is a record, not a check.
func (b *browser) shot(name string) {
	b.t.Helper()
	var png []byte
	var err error
	for try := 0; try < 5; try++ {
		if try > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		if png, err = chromedp.Run(b.ctx, chromedp.FullScreenshot(100)); err == nil {
			break
		}
	}
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// h1 waits for a page whose heading is want.
func (b *browser) h1(want string) {
	b.t.Helper()
	b.waitFor(`(document.querySelector("h1") || {}).textContent === `+jsString(want), 10*time.Second)
}
