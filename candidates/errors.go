package candidates

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/pyjson"
)

// Error codes Placement sets explicitly (placement/errors.py); every other
// error carries DefaultErrorCode.
const (
	DefaultErrorCode = "placement.undefined_code"
	CodeBadValue     = "placement.query.bad_value"
	CodeMissingValue = "placement.query.missing_value"
	CodeDuplicateKey = "placement.query.duplicate_key"
)

// APIError is an error Placement would answer with a non-200 status. Message
// is Placement's own text for the problem (the part after the webob
// boilerplate), so callers can print it or wrap it in Placement's JSON body.
type APIError struct {
	Status  int    // 400, 404, ...
	Code    string // one of the Code* constants or DefaultErrorCode
	Message string
}

func (e *APIError) Error() string { return e.Message }

// Body renders the JSON error document Placement sends for e at microversion
// mv, byte for byte: webob wraps the message in its status explanation and
// strips anything that looks like markup, Placement's formatter adds "code"
// from 1.23, and Python's json.dumps spaces and escapes the result.
func (e *APIError) Body(mv Microversion, requestID string) []byte {
	title, explanation := statusText(e.Status)
	detail := stripTags(explanation + "<br /><br />\n" + e.Message + "\n\n")
	if e.Status == 406 {
		// A microversion refusal comes from the microversion middleware,
		// with webob's 406 template and no version to pick a format by.
		detail = stripTags(explanation + " <br /><br />\n" + e.Message)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"errors": [{"status": %d, "title": %s, "detail": %s`, e.Status, pyjson.Quote(title), pyjson.Quote(detail))
	if e.Status == 406 {
		if requestID != "" {
			fmt.Fprintf(&b, `, "request_id": %s`, pyjson.Quote(requestID))
		}
		fmt.Fprintf(&b, `, "max_version": "1.%d", "min_version": "1.0"}]}`, int(MaxMicroversion))
		return []byte(b.String())
	}
	if mv >= 23 {
		code := e.Code
		if code == "" {
			code = DefaultErrorCode
		}
		fmt.Fprintf(&b, `, "code": %s`, pyjson.Quote(code))
	}
	if requestID != "" {
		fmt.Fprintf(&b, `, "request_id": %s`, pyjson.Quote(requestID))
	}
	b.WriteString("}]}")
	return []byte(b.String())
}

// statusText gives webob's title and explanation for the statuses this
// package produces.
func statusText(status int) (title, explanation string) {
	switch status {
	case 400:
		return "Bad Request", "The server could not comply with the request since it is either malformed or otherwise incorrect."
	case 404:
		return "Not Found", "The resource could not be found."
	case 406:
		return "Not Acceptable", "The resource could not be generated that was acceptable to your browser\n(content of type application/json."
	case 500:
		return "Internal Server Error", "The server has either erred or is incapable of performing the requested operation."
	}
	return http.StatusText(status), ""
}

var (
	brRE      = &lazyre.Regexp{Expr: `(?is)<br.*?>`}
	commentRE = &lazyre.Regexp{Expr: `<!--|-->`}
	tagRE     = &lazyre.Regexp{Expr: `(?s)<.*?>`}
)

// stripTags is webob.exc.strip_tags, which Placement applies to the whole
// error text: newlines become spaces, <br> becomes a newline, and any other
// <...> vanishes (so does part of a message that quotes such text).
func stripTags(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "\r", "")
	s = brRE.Get().ReplaceAllString(s, "\n")
	s = commentRE.Get().ReplaceAllString(s, "")
	return tagRE.Get().ReplaceAllString(s, "")
}

// CeilingError is a search stopped because the answer would hold more
// allocation requests than Options.Ceiling allows (Ceiling), or take more
// memory than Options.CeilingBytes (Bytes).
type CeilingError struct {
	Ceiling int
	Bytes   int64
}

func (e *CeilingError) Error() string {
	if e.Bytes > 0 {
		return fmt.Sprintf("the answer would take more than %d MB of allocation requests (the memory ceiling of one search)", e.Bytes>>20)
	}
	return fmt.Sprintf("the answer would hold more than %d allocation requests (the candidate ceiling)", e.Ceiling)
}

// StepsError is a search stopped after Options.MaxSteps steps of its walk:
// its request groups combine in more ways than any answer needs to try.
type StepsError struct{ Steps int64 }

func (e *StepsError) Error() string {
	return fmt.Sprintf("the search gave up after %d steps (the --max-steps ceiling): its request groups combine in too many ways", e.Steps)
}
