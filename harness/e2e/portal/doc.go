// Package portal holds the end-to-end test of the consumer portal in a
// real browser: headless Chromium (Debian's chromium) driven over the
// DevTools protocol (chromedp) against the real API and worker processes
// (testenv) and a real HTTPS receiver (harness/receiver). It saves a
// screenshot of each page under bin/portal/. It has no code of its own.
package portal
