package strictjson

import (
	"strings"
	"testing"
)

type inner struct {
	Name string `json:"name"`
}

type doc struct {
	Suite string            `json:"suite"`
	Tasks []string          `json:"tasks"`
	Items []inner           `json:"items,omitempty"`
	Extra map[string]inner  `json:"extra,omitempty"`
	Ptr   *inner            `json:"ptr,omitempty"`
	Meta  map[string]string `json:"meta,omitempty"`
}

func TestUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want "" means accepted
	}{
		{"ok", `{"suite":"e4m3","tasks":["a","b"],"items":[{"name":"x"}],"ptr":{"name":"y"},"extra":{"k":{"name":"z"}}}`, ""},
		{"ok with trailing whitespace", "{\"suite\":\"e4m3\"}\n\t ", ""},
		{"trailing garbage", `{"suite":"e4m3"} x`, "data after the JSON value"},
		{"second object", `{"suite":"e4m3"}{"suite":"e5m2"}`, "data after the JSON value at byte"},
		{"duplicate key", `{"suite":"e4m3","suite":"e5m2"}`, `key "suite" appears twice`},
		{"duplicate nested key", `{"items":[{"name":"a"},{"name":"b","name":"c"}]}`, `items[1]: key "name" appears twice`},
		{"duplicate map key", `{"meta":{"k":"1","k":"2"}}`, `meta: key "k" appears twice`},
		{"same key in two objects is fine", `{"items":[{"name":"a"},{"name":"b"}]}`, ""},
		{"case-folded key", `{"SUITE":"e4m3"}`, `key "SUITE" differs from the field "suite" only in case`},
		{"case-folded nested key", `{"ptr":{"Name":"y"}}`, `ptr: key "Name" differs from the field "name" only in case`},
		{"case-folded key in map value", `{"extra":{"k":{"NAME":"z"}}}`, `extra.k: key "NAME"`},
		{"unknown key", `{"suite":"e4m3","colour":"red"}`, `unknown field "colour"`},
		{"syntax error", `{"suite":`, "unexpected EOF"},
		{"type error", `{"suite":1}`, "cannot unmarshal number"},
		{"empty", ``, "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			err := Unmarshal([]byte(tc.in), &d)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestUnmarshalValues(t *testing.T) {
	var d doc
	if err := Unmarshal([]byte(`{"suite":"e4m3","tasks":["a"],"ptr":{"name":"y"}}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.Suite != "e4m3" || len(d.Tasks) != 1 || d.Tasks[0] != "a" || d.Ptr == nil || d.Ptr.Name != "y" {
		t.Fatalf("decoded %+v", d)
	}
}

func TestCheckDuplicates(t *testing.T) {
	if err := CheckDuplicates([]byte(`{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`)); err != nil {
		t.Fatal(err)
	}
	err := CheckDuplicates([]byte(`{"a":{"dtype":"U8"},"b":1,"a":{"dtype":"U8"}}`))
	if err == nil || !strings.Contains(err.Error(), `key "a" appears twice`) || !IsStrictness(err) {
		t.Fatalf("error %v", err)
	}
}

// TestText: text encoding/json would silently rewrite to U+FFFD is
// refused, and every real character, escaped or not, is accepted and
// decoded as written.
func TestText(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want "" means accepted and decoded to suite == dec
		dec            string
	}{
		{"ascii", `{"suite":"sectest"}`, "", "sectest"},
		{"multi-byte UTF-8", `{"suite":"sec€test😀"}`, "", "sec€test😀"},
		{"U+FFFD itself", `{"suite":"sec` + "\uFFFD" + `test"}`, "", "sec\uFFFDtest"},
		{"escaped U+FFFD", `{"suite":"sec\ufffdtest"}`, "", "sec\uFFFDtest"},
		{"escaped pair", `{"suite":"\ud83d\ude00"}`, "", "😀"},
		{"escaped backslash then u", `{"suite":"\\ud800"}`, "", `\ud800`},
		{"invalid byte", "{\"suite\":\"sec\xfftest\"}", "invalid UTF-8 at byte 13 (0xff)", ""},
		{"invalid byte in a key", "{\"sui\xfete\":\"x\"}", "invalid UTF-8 at byte 5 (0xfe)", ""},
		{"truncated sequence", "{\"suite\":\"\xe2\x82\"}", "invalid UTF-8 at byte 10", ""},
		{"overlong encoding", "{\"suite\":\"\xc0\xaf\"}", "invalid UTF-8 at byte 10", ""},
		{"surrogate encoded in UTF-8", "{\"suite\":\"\xed\xa0\x80\"}", "invalid UTF-8 at byte 10", ""},
		{"lone high surrogate escape", `{"suite":"a\ud800b"}`, `\ud800 at byte 11 is a lone UTF-16 surrogate`, ""},
		{"lone low surrogate escape", `{"suite":"\uDC00"}`, `\udc00 at byte 10 is a lone UTF-16 surrogate`, ""},
		{"high surrogate then non-low", `{"suite":"\ud800\u0041"}`, "lone UTF-16 surrogate", ""},
		{"two high surrogates", `{"suite":"\ud800\ud800"}`, "lone UTF-16 surrogate", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			err := Unmarshal([]byte(tc.in), &d)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !IsStrictness(err) {
					t.Fatalf("error %v, want a strictness error containing %q", err, tc.want)
				}
				if err := CheckDuplicates([]byte(tc.in)); err == nil {
					t.Errorf("CheckDuplicates accepted it")
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if d.Suite != tc.dec {
				t.Fatalf("decoded %q, want %q", d.Suite, tc.dec)
			}
		})
	}
}
