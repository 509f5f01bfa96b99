// Package web tests `muster serve`'s terminal views end to end: the real
// muster binary's daemon and server, real panes, the page in real headless
// Chromium (chromedp), and hostile clients of the server. It has no code of
// its own; the tests are in package web_test.
package web
