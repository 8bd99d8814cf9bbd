// SPDX-License-Identifier: GPL-2.0-or-later
// gen: a seeded corpus of small templates over NFD-shaped data, aimed at what pkg/gotmpl
// prints (numbers, printf, JSON, case changes, conversions, types) and the errors it gives.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"strings"
)

// nfdData: the data every generated case runs over, in gotmpl_json.h's JSON form; the shape
// of test/fuzz/fuzz_gotmpl_exec.c's nfd_data (NFD's matched features: a domain, a feature, a
// list of MatchedElement maps) and a few plain values of every kind.
const nfdData = `{"pci": {"device": [
  {"$strmap": {"class": "0300", "vendor": "8086", "device": "9a49", "sriov_totalvfs": "7",
   "iommu_group/type": "DMA"}},
  {"$strmap": {"class": "0380", "vendor": "1002", "device": "73bf"}}]},
 "kernel": {"loadedmodule": [{"$strmap": {"Name": "i915"}}],
  "config": [{"$strmap": {"Name": "NO_HZ", "Value": "y"}}]},
 "system": {"osRelease": [{"$strmap": {"Name": "ID", "Value": "debian"}},
  {"$strmap": {"Name": "VERSION_ID", "Value": "12"}}]},
 "misc": [-3, {"$int64": 1099511627776}, 2.5, true, null, {"$strlist": ["b", "a"]}],
 "num": {"i": 42, "neg": -7, "f": 0.1, "big": {"$float": 1e21}, "tiny": 1e-7,
  "third": 0.3333333333333333, "zero": {"$float": 0}, "i64": {"$int64": -9223372036854775808}},
 "str": {"ascii": "Hello World", "uni": "héllo wörld ǅemal Σίσυφος", "empty": "",
  "num": "12", "float": "1e400", "big": "9223372036854775808", "hex": "0x1f",
  "sp": "  padded  ", "bad": "a\u00ffz"}}`

var (
	genStrings = []string{`"Hello World"`, `"hello_world-Foo bar"`, `"héllo wörld"`, `"ǅemal ǈ"`,
		`"ÀÉÎ õü"`, `"Σίσυφος ΣΑΣ"`, `"straße"`, `"İstanbul ı"`, `""`, `"  x  "`, `"12"`, `"-5"`,
		`"3.25"`, `"1e400"`, `"-1e400"`, `"9223372036854775807"`, `"9223372036854775808"`,
		`"-9223372036854775809"`, `"0x1f"`, `"1_000"`, `" 7"`, `"NaN"`, `"inf"`, `"abc"`,
		`"a,b,c"`, `"日本語テキスト"`, `"ﬁ ǆ ᾳ"`, `"\u00e9t\u00e9"`, `"x\ty"`, `"HTTPServer2Go"`,
		`"foo.bar/baz"`, "`raw\\n`", `"true"`, `"1.5e3"`, `".5"`, `"5."`}
	genInts = []string{"0", "1", "-1", "7", "42", "-42", "255", "1000000", "9223372036854775807",
		"-9223372036854775807", "0x1F", "0o17", "0b101", "1_000", "'a'", "'é'", "3"}
	genFloats = []string{"0.1", "0.2", "1.5", "-2.25", "1e21", "1e20", "1e-7", "123456789.125",
		"3.0", "0.0", "-0.0", "1e100", "2.5e-5", "0.3", "100.0", "1e6", "6.02e23", "0x1p-2"}
	genPaths = []string{".num.i", ".num.neg", ".num.f", ".num.big", ".num.tiny", ".num.third",
		".num.zero", ".num.i64", ".str.ascii", ".str.uni", ".str.empty", ".str.num",
		".str.float", ".str.big", ".str.hex", ".str.sp", ".misc", ".pci.device",
		"(index .pci.device 0)", "(index .pci.device 0).vendor", ".kernel.loadedmodule",
		".system.osRelease", "(index .misc 5)", "(index .misc 2)", "(index .misc 1)", ".",
		".pci", "(index .misc 4)", ".nokey", ".pci.nokey", "(index .pci.device 1).nokey",
		".num.i.x", "$", ".str.bad"}
	genStrFuncs = []string{"upper", "lower", "title", "untitle", "camelcase", "snakecase",
		"kebabcase", "swapcase", "initials", "trim", "nospace", "quote", "squote", "b64enc",
		"b32enc", "toString", "len", "typeOf", "kindOf", "toJson", "toPrettyJson",
		"toRawJson", "trimAll \"lo\"", "trunc 3", "trunc -3", "abbrev 5", "abbrevboth 5 10",
		"repeat 2", "substr 1 4", "wrap 4", "wrapWith 3 \"|\"", "indent 2", "nindent 1",
		"replace \"l\" \"L\"", "plural \"one\" \"many\"", "sha1sum", "adler32sum", "cat \"x\"",
		"contains \"o\"", "hasPrefix \"h\"", "splitList \" \"", "split \" \"", "regexFind \"[a-z]+\"",
		"shellQuote", "html", "js", "urlquery", "print", "println", "toStrings", "atoi",
		"int", "int64", "float64", "toDecimal", "empty", "default \"d\"", "b64dec", "b32dec",
		"urlParse", "semver", "fromJson", "mustFromJson", "sortAlpha", "first", "last",
		"uniq", "reverse", "compact", "keys", "deepCopy", "list", "ternary 1 2", "not",
		"quote", "squote", "toString"}
	genNumFuncs = []string{"add", "sub", "mul", "div", "mod", "max", "min", "addf", "subf",
		"mulf", "divf", "maxf", "minf", "add1", "add1f", "floor", "ceil", "round", "biggest",
		"eq", "ne", "lt", "le", "gt", "ge"}
	genVerbs = []string{"v", "+v", "#v", "T", "d", "s", "q", "x", "X", "o", "O", "b", "e", "E",
		"f", "F", "g", "G", "c", "U", "#U", "t", "p", "z", "!", "%", "5d", "-5d", "05d", "+d",
		" d", "#x", "#o", "08.3f", ".2f", ".0f", "10.4e", "-10s", ".2s", "x", "+.3g", "#g",
		"[2]d", "[1]v", "[3]s", "[0]d", "[x]d", "[2]*d", "*d", "-*d", ".*f", "+q", "#q",
		"999999999d", "100000000s", "10000000000d", "6.2v", "+x", "# x", "+%", "-08d", "+-z",
		"U", "#+v", "05s", "-10.3v", "2$d", "lv", "ld"}
	genRegex = []string{`"[a-z]+"`, `"a(b"`, `"a**"`, `"(?P<n>x)"`, `"[z-a]"`, `"\\d+"`,
		`"\\8"`, `"x{2,1}"`, `"(?i)HE"`, `"[[:alpha:]]"`, `"[[:foo:]]"`, `"a{1001}"`,
		`"\\p{Greek}+"`, `"\\pX"`, `"(?<n>x)"`, `"\\Q.\\E"`, `"a|*"`, `")"`, `"^$"`, `"x*"`}
)

type gen struct{ r *rand.Rand }

func (g *gen) pick(l []string) string { return l[g.r.Intn(len(l))] }

// value: an operand (a literal, a data path, a variable or a parenthesized call).
func (g *gen) value(depth int) string {
	switch n := g.r.Intn(12); {
	case n < 2:
		return g.pick(genStrings)
	case n < 4:
		return g.pick(genInts)
	case n < 6:
		return g.pick(genFloats)
	case n < 9:
		return g.pick(genPaths)
	case n < 10:
		return g.pick([]string{"true", "false", "nil", "(list 1 2 3)", "(list \"b\" \"a\")",
			"(dict \"a\" 1 \"b\" 0.5)", "(until 3)", "(untilStep 0 10 3)", "(seq 3)",
			"(splitList \",\" \"a,b\")", "(list)", "(dict)", "(list 0.1 (dict \"x\" (list 1.5)))",
			"(dict \"k\" (list (dict \"d\" (list 1 2.5 \"s\" nil true))))"})
	default:
		if depth > 1 {
			return g.pick(genPaths)
		}
		return "(" + g.call(depth+1) + ")"
	}
}

// call: one function call.
func (g *gen) call(depth int) string {
	switch n := g.r.Intn(10); {
	case n < 3:
		return g.pick(genStrFuncs) + " " + g.value(depth)
	case n < 6:
		f := g.pick(genNumFuncs)
		args := 2
		switch f {
		case "add1", "add1f", "floor", "ceil":
			args = 1
		case "round":
			return f + " " + g.value(depth) + " " + g.pick([]string{"0", "1", "2", "3"})
		case "max", "min", "biggest", "add", "mul", "addf", "mulf", "maxf", "minf":
			args = 1 + g.r.Intn(3)
		}
		s := f
		for i := 0; i < args; i++ {
			s += " " + g.value(depth)
		}
		return s
	case n < 8:
		s := "printf \""
		for i, k := 0, 1+g.r.Intn(3); i < k; i++ {
			s += g.pick([]string{"", "x=", " ", ":"}) + "%" + g.pick(genVerbs)
		}
		s += "\""
		for i, k := 0, g.r.Intn(4); i < k; i++ {
			s += " " + g.value(depth)
		}
		return s
	case n < 9:
		return g.pick([]string{"regexFind", "regexMatch", "regexFindAll", "regexSplit",
			"regexReplaceAll", "mustRegexFind", "regexQuoteMeta"}) + " " + g.pick(genRegex) +
			" " + g.pick(genStrings) + g.pick([]string{"", " -1", " 1", " \"$1\""})
	default:
		return g.pick([]string{"index", "slice", "len", "print", "println", "and", "or",
			"eq", "html", "js", "urlquery", "not", "call"}) + " " + g.value(depth) + " " +
			g.value(depth)
	}
}

// template: one or a few actions, sometimes over several lines (error positions), sometimes
// with a syntax mistake (parse errors).
func (g *gen) template() string {
	var b strings.Builder
	for i, k := 0, 1+g.r.Intn(2); i < k; i++ {
		if g.r.Intn(4) == 0 {
			b.WriteString(g.pick([]string{"\n", "x\n", "a=", "\n  "}))
		}
		switch n := g.r.Intn(20); {
		case n < 12:
			b.WriteString("{{ " + g.call(0) + " }}")
		case n < 14:
			b.WriteString("{{ " + g.value(0) + " | " + g.pick(genStrFuncs) + " }}")
		case n < 15:
			b.WriteString("{{ range $i, $e := " + g.value(0) + " }}{{ $i }}={{ " +
				g.pick(genStrFuncs) + " $e }};{{ end }}")
		case n < 16:
			b.WriteString("{{ $v := " + g.value(0) + " }}{{ if $v }}" +
				"{{ printf \"%v|%T\" $v $v }}{{ else }}none{{ end }}")
		case n < 17:
			b.WriteString("{{ with " + g.value(0) + " }}{{ . | toJson }}{{ end }}")
		case n < 18:
			b.WriteString("{{ " + g.value(0) + " }}")
		default:
			// a mistake: a cut action, a stray token, an unknown function, a bad number
			s := "{{ " + g.call(0) + " }}"
			switch g.r.Intn(6) {
			case 0:
				s = s[:g.r.Intn(len(s))]
			case 1:
				s = strings.Replace(s, " ", g.pick([]string{" ) ", " | ", " := ", " end ",
					" , ", " . ", " 1x ", " \"\\q\" ", " '' ", " ($ ", " else "}), 1)
			case 2:
				s = "{{ nosuchfunc " + g.value(0) + " }}"
			case 3:
				s = "{{ if " + g.value(0) + " }}x"
			case 4:
				s = "{{ " + g.value(0) + " " + g.value(0) + " }}"
			default:
				s = "{{ define \"x\" }}{{ " + g.call(0) + " }}{{ end }}{{ template \"x\" " +
					g.value(0) + " }}{{ template \"y\" }}"
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// caseStrings and caseFuncs: every case and width function over text beyond ASCII (digraphs,
// titlecase Greek, dotted I, Georgian, ligatures) and over bytes of no UTF-8.
var (
	caseStrings = []string{"héllo wörld ǅemal Σίσυφος", "ǆungla ǉ ǌ", "İstanbul ı", "straße ß",
		"ﬁ ᾳ ᾼ", "ა ბ Ⴀ", "ÀÉÎ õü ÿ", "x\xff y\xc3", "Ǆ Ǉ", "ǈx ǅ", "ABC déf_GHI-jkl"}
	caseFuncs = []string{"upper", "lower", "title", "untitle", "swapcase", "camelcase",
		"snakecase", "kebabcase", "initials", "nospace", "trunc 3", "abbrev 5", "wrap 3",
		"substr 1 3", "trim", "quote", "len", "toJson"}
)

// generate: n cases from seed, each with NFD's data (the same n and seed give the same lines),
// then the case corpus (each string as a Go string literal: \x escapes are raw bytes).
func generate(w io.Writer, seed int64, n int) error {
	g := &gen{rand.New(rand.NewSource(seed))}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(nfdData)); err != nil {
		return err
	}
	data := json.RawMessage(compact.Bytes())
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := 0; i < n; i++ {
		c := struct {
			Name string          `json:"name"`
			Tmpl string          `json:"tmpl"`
			Data json.RawMessage `json:"data"`
		}{fmt.Sprintf("gen-%d-%d", seed, i), g.template(), data}
		if err := enc.Encode(&c); err != nil {
			return err
		}
	}
	k := 0
	for _, str := range caseStrings {
		for _, f := range caseFuncs {
			c := struct {
				Name string `json:"name"`
				Tmpl string `json:"tmpl"`
			}{fmt.Sprintf("gen-%d-case-%d", seed, k), "{{ " + f + " \"" + str + "\" }}" +
				"{{ " + f + " `" + strings.ReplaceAll(str, `\x`, "") + "` }}"}
			k++
			if err := enc.Encode(&c); err != nil {
				return err
			}
		}
	}
	return nil
}
