/*
 * What a rule's regular expression may not do before it reaches glibc's regcomp, whose
 * compile time explodes on two shapes the fuzzer found: a quantifier right after another
 * (`t**...*` in an alternation: ~n^4, 3 s for 110 stars) and bounded repetitions nested
 * in each other (every `{m,n}` copies its operand n times: `((a{1,100}){1,100}){1,100}`
 * is a million copies). POSIX leaves the first undefined anyway; the second is capped
 * at REGEX_COPIES_MAX copies along any nesting.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/rules_int.h"

#define REGEX_NEST_MAX 32
#define REGEX_COPIES_MAX 1000

/* Length of the bracket expression at p ('['), to its closing ']'; 0 if unterminated. */
static size_t bracket_len(const char *p)
{
	size_t i = 1;

	if (p[i] == '^')
		i++;
	if (p[i] == ']')
		i++;   /* a ']' first is a member */
	for (; p[i]; i++) {
		if (p[i] == '[' && (p[i + 1] == ':' || p[i + 1] == '.' || p[i + 1] == '=')) {
			const char *end = strstr(p + i + 2, (char[]){ p[i + 1], ']', 0 });

			if (!end)
				return 0;
			i = (size_t)(end - p) + 1;
		} else if (p[i] == ']') {
			return i + 1;
		}
	}
	return 0;
}

/* A quantifier at p: its length and upper bound (1 for *, +, ?: they copy nothing). */
static size_t quantifier(const char *p, unsigned long *copies)
{
	char *end;
	unsigned long lo, hi;

	*copies = 1;
	if (*p == '*' || *p == '+' || *p == '?')
		return 1;
	if (*p != '{')
		return 0;
	lo = strtoul(p + 1, &end, 10);
	if (end == p + 1)
		return 0;   /* a literal '{' */
	hi = lo;
	if (*end == ',') {
		char *e2;

		hi = strtoul(end + 1, &e2, 10);
		if (e2 == end + 1)
			hi = lo ? lo : 1;   /* {n,}: a copy, then a star */
		end = e2;
	}
	if (*end != '}')
		return 0;
	*copies = hi == 0 ? 1 : hi > REGEX_COPIES_MAX ? REGEX_COPIES_MAX + 1 : hi;
	return (size_t)(end - p) + 1;
}

static int too_many(char *why, size_t len)
{
	snprintf(why, len, "bounded repetitions nested to more than %d copies", REGEX_COPIES_MAX);
	return -1;
}

/* One atom at p: a group's bounds, an escape, a bracket expression or a character.
 * Sets *last to what a quantifier after it would multiply. Returns its length. */
static size_t atom(const char *p, size_t *depth, unsigned long *inner, unsigned long *last)
{
	size_t b;

	*last = 1;
	if (p[0] == '\\' && p[1])
		return 2;
	if (p[0] == '[')
		return (b = bracket_len(p)) ? b : 1;   /* unterminated: regcomp says so */
	if (p[0] == '(') {
		if (++*depth <= REGEX_NEST_MAX)
			inner[*depth] = 1;
		return 1;
	}
	if (p[0] == ')' && *depth > 0) {
		*last = inner[(*depth)--];   /* a quantifier next multiplies the whole group */
		if (*last > inner[*depth])
			inner[*depth] = *last;
	}
	return 1;
}

int regex_guard(const char *re, char *why, size_t len)
{
	unsigned long inner[REGEX_NEST_MAX + 1] = { 1 }, last = 1, copies;
	size_t depth = 0, i = 0, q;
	bool after_quant = false;

	while (re[i]) {
		if ((q = quantifier(re + i, &copies)) != 0) {
			if (after_quant) {
				snprintf(why, len, "a quantifier follows a quantifier at offset %zu", i);
				return -1;
			}
			last = last * copies > REGEX_COPIES_MAX ? REGEX_COPIES_MAX + 1
								: last * copies;
			if (last > inner[depth])
				inner[depth] = last;
			after_quant = true;
			i += q;
		} else {
			after_quant = false;
			i += atom(re + i, &depth, inner, &last);
			if (depth > REGEX_NEST_MAX) {
				snprintf(why, len, "groups nested deeper than %d", REGEX_NEST_MAX);
				return -1;
			}
		}
		if (inner[depth] > REGEX_COPIES_MAX)
			return too_many(why, len);
	}
	for (size_t d = 0; d <= depth; d++)   /* unclosed groups too */
		if (inner[d] > REGEX_COPIES_MAX)
			return too_many(why, len);
	return 0;
}

