package store

import (
	"net/url"
	"strings"

	"github.com/openlayer-ai/workspace-service/models"
)

// keepSensitiveAtOrigin refuses an update that moves a subscription to
// another origin (scheme, host or port) while a sensitive header would
// keep its stored value there: the new url's host would receive a secret
// that whoever moved it never had to know (a portal user, or a key that
// can edit webhooks but was never told the value). Sending the value again
// in the same update, or removing the header, is what moving takes.
func keepSensitiveAtOrigin(oldURL string, u models.WebhookUpdate, stored storedHeaders) error {
	if u.URL == nil || sameOrigin(oldURL, *u.URL) {
		return nil
	}
	var v models.Validation
	for _, s := range stored {
		if s.Sealed == nil {
			continue
		}
		kept := u.Headers == nil // headers omitted: all kept
		for _, h := range u.Headers {
			if strings.EqualFold(h.Name, s.Name) {
				kept = h.Keep
			}
		}
		if kept {
			v.Add("headers."+s.Name, "is sensitive, and its value is never carried to another host: the url's host changes, so send this header's value again in the same update (or leave the header out of headers to remove it)")
		}
	}
	return v.Err()
}

// sameOrigin compares two webhook urls' scheme, host and port (443 when
// none is written), the host case-insensitively.
func sameOrigin(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return "443"
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}
