package placementclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/rpctl/rpctl/inventory"
)

// Error codes Placement puts in its error bodies (placement/errors.py).
const (
	CodeConcurrentUpdate = "placement.concurrent_update"
	CodeInventoryInUse   = "placement.inventory.inuse"
	CodeDuplicateName    = "placement.duplicate_name"
	CodeUndefined        = "placement.undefined_code"
)

// Sentinels for errors.Is: an *Error matches the one its status and code
// mean.
var (
	ErrNotFound           = &Error{Status: http.StatusNotFound}
	ErrBadRequest         = &Error{Status: http.StatusBadRequest}
	ErrConflict           = &Error{Status: http.StatusConflict}
	ErrGenerationConflict = &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate}
	ErrInventoryInUse     = &Error{Status: http.StatusConflict, Code: CodeInventoryInUse}
)

// Error is an error answer from Placement.
type Error struct {
	Status int
	// Code is Placement's error code (from microversion 1.23), e.g.
	// placement.concurrent_update.
	Code string
	// Message is Placement's message: the last line of the error's detail,
	// as osc-placement shows it.
	Message   string
	Method    string
	Path      string
	RequestID string
}

func (e *Error) Error() string {
	what := http.StatusText(e.Status)
	switch e.kind() {
	case CodeConcurrentUpdate:
		what = "generation conflict"
	case CodeInventoryInUse:
		what = "inventory in use"
	}
	if e.Method == "" {
		return fmt.Sprintf("Placement %d %s", e.Status, what)
	}
	msg := e.Message
	switch e.Status {
	case http.StatusForbidden:
		// Placement's message ("Policy does not allow placement:... to be
		// performed.") names the rule, not what to do.
		return fmt.Sprintf("Placement answered 403 Forbidden to %s %s: the credentials lack the role its policy wants for this (by default admin: check the token, or the user's role in the project)", e.Method, e.Path)
	case http.StatusUnauthorized:
		return fmt.Sprintf("Placement answered 401 Unauthorized to %s %s: the token was refused (expired, or not valid for this Keystone)", e.Method, e.Path)
	}
	if msg == "" {
		msg = what
	} else {
		msg = what + ": " + msg
	}
	return fmt.Sprintf("Placement answered %d to %s %s: %s", e.Status, e.Method, e.Path, msg)
}

// Is matches the sentinels: same status, and the same code when the
// sentinel names one. A 401 or 403 is also inventory.ErrForbidden, the one
// kind every command (inventory edits, claims) maps to its refused-input
// code, whichever domain the request was made for.
func (e *Error) Is(target error) bool {
	if target == inventory.ErrForbidden {
		return e.Status == http.StatusForbidden || e.Status == http.StatusUnauthorized
	}
	t, ok := target.(*Error)
	if !ok || t.Method != "" || t.Message != "" {
		return false
	}
	return t.Status == e.Status && (t.Code == "" || t.Code == e.kind())
}

// kind is what the error means. Placement's DELETE of one inventory in use
// answers with placement.concurrent_update and an "... in use." message;
// that is an inventory in use, and no re-read would help.
func (e *Error) kind() string {
	if e.Status == http.StatusConflict && e.Code == CodeConcurrentUpdate && strings.HasSuffix(e.Message, " in use.") {
		return CodeInventoryInUse
	}
	return e.Code
}

func newAPIError(method, path string, status int, reqID string, body []byte) *Error {
	e := &Error{Status: status, Method: method, Path: path, RequestID: reqID}
	var doc struct {
		Errors []struct {
			Detail    string `json:"detail"`
			Code      string `json:"code"`
			RequestID string `json:"request_id"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &doc) == nil && len(doc.Errors) > 0 {
		d := doc.Errors[0]
		e.Code = d.Code
		if e.RequestID == "" {
			e.RequestID = d.RequestID
		}
		e.Message = lastLine(d.Detail)
		// A JSON-schema failure goes on with the whole schema and instance;
		// its first sentence is the message.
		if i := strings.Index(e.Message, "  Failed validating"); i > 0 {
			e.Message = strings.TrimSpace(e.Message[:i])
		}
	} else {
		e.Message = lastLine(string(body))
	}
	return e
}

// lastLine is osc-placement's reading of an error detail: webob puts its
// generic explanation first and the handler's message on the last line.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
