// SPDX-License-Identifier: GPL-2.0-or-later
// goregex_re2: the C contract of goregex.h over RE2's C++ API; no exception crosses it.
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

extern "C" int goregex_compile(const char *pattern, unsigned flags, struct goregex **out,
			       char *errbuf, size_t errlen)
{
	return goregex_compile_mem(pattern, flags, GOREGEX_MAX_MEM, out, errbuf, errlen);
}

extern "C" int goregex_compile_mem(const char *pattern, unsigned flags, size_t max_mem,
				   struct goregex **out, char *errbuf, size_t errlen)
{
	std::string *src = nullptr;
	re2::RE2 *re = nullptr;
	struct goregex *g;
	const char *why;

	*out = nullptr;
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
		return fail(errbuf, errlen, -EINVAL, why);
	}
	re2::RE2::Options opt;
	opt.set_encoding(re2::RE2::Options::EncodingUTF8);
	opt.set_longest_match(false); // leftmost-first, as Go
	opt.set_posix_syntax(false);  // Perl classes and flags, as Go
	opt.set_log_errors(false);
	opt.set_max_mem((int64_t)max_mem);
	opt.set_never_capture(true); // only match/no-match is asked
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
			fail(errbuf, errlen, -EINVAL,
			     "pattern too large: it needs more memory than allowed");
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

extern "C" int goregex_match(const struct goregex *g, const char *s, size_t len)
{
	re2::StringPiece text(s, len);

	if (g->flags & GOREGEX_FULL)
		return re2::RE2::FullMatch(text, *g->re) ? 1 : 0;
	return re2::RE2::PartialMatch(text, *g->re) ? 1 : 0;
}

extern "C" void goregex_free(struct goregex *g)
{
	if (!g)
		return;
	delete g->re;
	delete g;
}
