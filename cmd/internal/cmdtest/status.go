package cmdtest

type StatusDoc struct {
	Name   string `json:"name"`
	Checks []struct {
		Check   string  `json:"check"`
		Result  int     `json:"result"`
		Details *string `json:"details"`
	} `json:"checks"`
}
