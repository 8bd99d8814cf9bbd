// SPDX-License-Identifier: GPL-2.0-or-later
// goregex_re2: the C contract of goregex.h over RE2's C++ API; no exception crosses it.
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <map>
#include <new>
#include <string>

#include <re2/re2.h>

extern "C" {
#include "goregex/goregex.h"
}

struct goregex {
	re2::RE2 *re;	// owned
	unsigned flags; // GOREGEX_*
};

static int fail(char *errbuf, size_t errlen, int code, const char *msg)
{
	if (errbuf && errlen)
		snprintf(errbuf, errlen, "%s", msg);
	return code;
}

// Rewrite Go-only syntax for RE2 into dst, or return a message for what Go refuses.
// Go 1.22 accepts (?<name>re) (RE2 20220601 only (?P<name>re)); Go has no \C.
static const char *go_to_re2(const char *p, std::string &dst)
{
	bool in_class = false;

	for (size_t i = 0; p[i]; i++) {
		char c = p[i];

		if (c == '\\') {
			if (p[i + 1] == 'C')
				return "invalid escape sequence: \\C";
			if (p[i + 1] == 'Q') { // literal text up to \E, copied as is
				const char *e = strstr(p + i + 2, "\\E");
				size_t end = e ? (size_t)(e - p) + 2 : strlen(p);

				dst.append(p + i, end - i);
				i = end - 1;
				continue;
			}
			dst.push_back(c);
			if (p[i + 1])
				dst.push_back(p[++i]);
			continue;
		}
		if (in_class) {
			if (c == '[' && p[i + 1] == ':') { // [:alpha:] inside a class
				const char *e = strstr(p + i + 2, ":]");
				if (e) {
					dst.append(p + i, (size_t)(e - p) + 2 - i);
					i = (size_t)(e - p) + 1;
					continue;
				}
			}
			if (c == ']')
				in_class = false;
			dst.push_back(c);
			continue;
		}
		if (c == '[') {
			in_class = true;
			dst.push_back(c);
			if (p[i + 1] == '^')
				dst.push_back(p[++i]);
			if (p[i + 1] == ']') // a leading ] is literal
				dst.push_back(p[++i]);
			continue;
		}
		if (c == '(' && p[i + 1] == '?' && p[i + 2] == '<' && p[i + 3] != '=' &&
		    p[i + 3] != '!') {
			dst.append("(?P<");
			i += 2;
			continue;
		}
		dst.push_back(c);
	}
	return nullptr;
}

// Go's regexp/syntax ErrorCode for RE2's code (the two parsers share their checks).
static const char *go_code(re2::RE2::ErrorCode c)
{
	switch (c) {
	case re2::RE2::ErrorBadEscape:
		return "invalid escape sequence";
	case re2::RE2::ErrorBadCharClass:
		return "invalid character class";
	case re2::RE2::ErrorBadCharRange:
		return "invalid character class range";
	case re2::RE2::ErrorMissingBracket:
		return "missing closing ]";
	case re2::RE2::ErrorMissingParen:
		return "missing closing )";
	case re2::RE2::ErrorUnexpectedParen:
		return "unexpected )";
	case re2::RE2::ErrorTrailingBackslash:
		return "trailing backslash at end of expression";
	case re2::RE2::ErrorRepeatArgument:
		return "missing argument to repetition operator";
	case re2::RE2::ErrorRepeatSize:
		return "invalid repeat count";
	case re2::RE2::ErrorRepeatOp:
		return "invalid nested repetition operator";
	case re2::RE2::ErrorBadPerlOp:
		return "invalid or unsupported Perl syntax";
	case re2::RE2::ErrorBadUTF8:
		return "invalid UTF-8";
	case re2::RE2::ErrorBadNamedCapture:
		return "invalid named capture";
	default:
		return "regexp/syntax: internal error";
	}
}

// Compile pattern with RE2's budget max_mem; *large when it needs more.
static int compile(const char *pattern, unsigned flags, size_t max_mem, struct goregex **out,
		   bool *large, char *errbuf, size_t errlen)
{
	std::string *src = nullptr;
	re2::RE2 *re = nullptr;
	struct goregex *g;
	const char *why;

	*out = nullptr;
	*large = false;
	if (strlen(pattern) > GOREGEX_PATTERN_MAX)
		return fail(errbuf, errlen, -E2BIG, "pattern too long");
	src = new (std::nothrow) std::string();
	if (!src)
		return -ENOMEM;
	try {
		why = go_to_re2(pattern, *src);
	} catch (...) {
		delete src;
		return -ENOMEM;
	}
	if (why) {
		delete src;
		if ((flags & GOREGEX_GOERR) && errbuf && errlen) // Go: ErrInvalidEscape, `\C`
			return snprintf(errbuf, errlen,
					"error parsing regexp: invalid escape sequence: `\\C`"),
			       -EINVAL;
		return fail(errbuf, errlen, -EINVAL, why);
	}
	re2::RE2::Options opt;
	opt.set_encoding(re2::RE2::Options::EncodingUTF8);
	opt.set_longest_match(false); // leftmost-first, as Go
	opt.set_posix_syntax(false);  // Perl classes and flags, as Go
	opt.set_log_errors(false);
	opt.set_max_mem((int64_t)max_mem);
	opt.set_never_capture(!(flags & GOREGEX_CAPTURE)); // groups only when asked
	try {
		re = new re2::RE2(*src, opt);
	} catch (...) {
		re = nullptr;
	}
	delete src;
	if (!re)
		return -ENOMEM;
	if (!re->ok()) {
		if (re->error_code() == re2::RE2::ErrorPatternTooLarge) {
			*large = true;
			fail(errbuf, errlen, -EINVAL,
			     "pattern too large: it needs more memory than allowed");
		} else if ((flags & GOREGEX_GOERR) && errbuf && errlen) {
			snprintf(errbuf, errlen, "error parsing regexp: %s: `%s`",
				 go_code(re->error_code()), re->error_arg().c_str());
		} else if (errbuf && errlen) {
			// RE2 appends ": <the offending text>"; keep the reason only.
			const std::string &msg = re->error();
			size_t colon = msg.find(": ");

			snprintf(errbuf, errlen, "%.*s",
				 (int)(colon == std::string::npos ? msg.size() : colon),
				 msg.c_str());
		}
		delete re;
		return -EINVAL;
	}
	g = new (std::nothrow) struct goregex;
	if (!g) {
		delete re;
		return -ENOMEM;
	}
	g->re = re;
	g->flags = flags;
	*out = g;
	return 0;
}

extern "C" int goregex_compile(const char *pattern, unsigned flags, struct goregex **out,
			       char *errbuf, size_t errlen)
{
	bool large;

	return compile(pattern, flags, GOREGEX_MAX_MEM, out, &large, errbuf, errlen);
}

extern "C" int goregex_compile_budget(const char *pattern, unsigned flags, size_t max_mem,
				      struct goregex **out, char *errbuf, size_t errlen)
{
	bool large;

	return compile(pattern, flags, max_mem, out, &large, errbuf, errlen);
}

// RE2's max_mem bounds a pattern's forward program and its DFAs (2/3) and its reverse program
// and DFA (1/3, compiled on first use), so the least budget that compiles is what it may use.
extern "C" int goregex_compile_mem(const char *pattern, unsigned flags, struct goregex **out,
				   size_t *mem, char *errbuf, size_t errlen)
{
	size_t m = GOREGEX_MIN_MEM;
	bool large;
	int r;

	for (;;) {
		r = compile(pattern, flags, m, out, &large, errbuf, errlen);
		if (r < 0 && large && m < GOREGEX_MAX_MEM) {
			m = m * 4 < GOREGEX_MAX_MEM ? m * 4 : GOREGEX_MAX_MEM;
			continue;
		}
		*mem = r < 0 ? 0 : m + strlen(pattern);
		return r;
	}
}

extern "C" int goregex_match(const struct goregex *g, const char *s, size_t len)
{
	re2::StringPiece text(s, len);

	if (g->flags & GOREGEX_FULL)
		return re2::RE2::FullMatch(text, *g->re) ? 1 : 0;
	return re2::RE2::PartialMatch(text, *g->re) ? 1 : 0;
}

extern "C" int goregex_find(const struct goregex *g, const char *s, size_t len, size_t pos, long *m,
			    int nm)
{
	re2::StringPiece text(s, len), sub[10];
	int n = nm < 1 ? 1 : nm > 10 ? 10 : nm;

	if (pos > len || n > 1 + g->re->NumberOfCapturingGroups())
		return 0;
	if (!g->re->Match(text, pos, len,
			  (g->flags & GOREGEX_FULL) ? re2::RE2::ANCHOR_BOTH : re2::RE2::UNANCHORED,
			  sub, n))
		return 0;
	for (int i = 0; i < nm; i++) {
		bool set = i < n && sub[i].data() != nullptr;

		m[2 * i] = set ? (long)(sub[i].data() - s) : -1;
		m[2 * i + 1] = set ? (long)(sub[i].data() - s + sub[i].size()) : -1;
	}
	return 1;
}

extern "C" int goregex_groups(const struct goregex *g)
{
	return g->re->NumberOfCapturingGroups() < 0 ? 0 : g->re->NumberOfCapturingGroups();
}

extern "C" size_t goregex_size(const struct goregex *g)
{
	int n = g->re->ProgramSize();

	return n < 0 ? 0 : (size_t)n;
}

extern "C" int goregex_group_index(const struct goregex *g, const char *name, size_t n)
{
	try {
		const std::map<std::string, int> &groups = g->re->NamedCapturingGroups();
		auto it = groups.find(std::string(name, n));

		return it == groups.end() ? -1 : it->second;
	} catch (...) {
		return -1;
	}
}

extern "C" void goregex_free(struct goregex *g)
{
	if (!g)
		return;
	delete g->re;
	delete g;
}
