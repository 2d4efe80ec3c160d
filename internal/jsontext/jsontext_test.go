package jsontext

import "testing"

func TestLoneSurrogate(t *testing.T) {
	for in, want := range map[string]int{
		`{"a":"x"}`:                  -1,
		`{"a":"\ud83d\ude00"}`:       -1,
		`{"a":"\uD83D\uDE00"}`:       -1,
		`{"a":"\u00e9\u4e2d"}`:       -1,
		`{"a":"x\ud800"}`:            7,
		`{"a":"x\udfff"}`:            7,
		`{"a":"\ud800\u0041"}`:       6,
		`{"a":"\ud800"}`:             6,
		`{"a":"\\ud800"}`:            -1,
		`{"\ud800":1}`:               2,
		`{"a":"\"\ud800"}`:           8,
		`{"a":1} \ud800`:             8, // no JSON: a decoder refuses it anyway
		`{"a":"\ud83d\ude00\udc00"}`: 18,
	} {
		if got := LoneSurrogate([]byte(in)); got != want {
			t.Errorf("LoneSurrogate(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestObjectEnd(t *testing.T) {
	for in, want := range map[string]int{
		`{"a":1}`:             7,
		`  {"a":[1,{"b":2}]}`: 19,
		`{"a":"}"}`:           9,
		`{"a":"\"}"}`:         11,
		`{"a":1}}`:            7,
		`{"a":1`:              -1,
		`[1]`:                 -1,
		``:                    -1,
	} {
		if got := ObjectEnd([]byte(in)); got != want {
			t.Errorf("ObjectEnd(%s) = %d, want %d", in, got, want)
		}
	}
}
