/*
 * The config's ground floor, shared by every part that reads its own section of the
 * YAML file (or its own YAML rules): a small YAML node tree that keeps line numbers,
 * typed scalar readers that report errors at the node's line into the FILE:LINE:COL
 * error list (conf/errors.h), and a table-driven walker for mappings. Includes nothing
 * above common/.
 */
#ifndef SANDGATE_CONF_CONF_H
#define SANDGATE_CONF_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/addr.h"
#include "conf/errors.h"

#define CY_MAX_DEPTH 32         /* deeper nesting is an error, bounds the recursion */
#define CY_MAX_ITEMS 200000     /* entries in one list or mapping */

enum cy_type { CY_SCALAR, CY_SEQ, CY_MAP };

struct cy_node {
	enum cy_type type;
	unsigned line;          /* 1-based */
	unsigned col;           /* 1-based */
	bool plain;             /* unquoted scalar: null/bool/number readings apply */
	char *str;              /* CY_SCALAR: NUL-terminated value */
	size_t len;             /* CY_SCALAR: bytes in str (may hold a NUL: rejected on read) */
	struct cy_node **items; /* CY_SEQ: items; CY_MAP: key, value, key, value, ... */
	size_t n;               /* entries in items */
};

/* Loader state shared by every reader: where errors go and whether memory ran out. */
struct cfg_ctx {
	const char *file;
	struct config_errors *errs;   /* may be NULL: errors only counted */
	size_t nerr;                  /* errors reported in this load */
	bool oom;
	char path[160];               /* key being read ("journal.fsync"), prefixes messages */
};

/*
 * Builds the tree of one YAML document. *root is NULL for an empty stream. Syntax errors,
 * aliases, tags, non-scalar or duplicate keys, too deep or too long collections are
 * reported to ctx. Returns 0 (possibly with errors reported), or -ENOMEM.
 */
int cy_parse(struct cfg_ctx *ctx, const char *text, size_t len, struct cy_node **root);
void cy_free(struct cy_node *n);

/* Records "FILE:LINE:COL: msg" (line 0: about the whole file). */
void cfg_err_at(struct cfg_ctx *ctx, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Records an error at node n (NULL: the whole file). */
void cfg_err(struct cfg_ctx *ctx, const struct cy_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes a printable, truncated copy of untrusted s for use in a message. */
#define CFG_SHOW_MAX 72
void cfg_show(const char *s, char out[CFG_SHOW_MAX]);

/* Readers: each returns 0, or -EINVAL after reporting the error at n. */
bool cy_is_null(const struct cy_node *n);
const char *cy_type_name(const struct cy_node *n);
int cy_need(struct cfg_ctx *ctx, const struct cy_node *n, enum cy_type t, const char *what);
int cy_str(struct cfg_ctx *ctx, const struct cy_node *n, const char **out);
int cy_bool(struct cfg_ctx *ctx, const struct cy_node *n, bool *out);
int cy_uint(struct cfg_ctx *ctx, const struct cy_node *n, uint64_t min, uint64_t max,
	    uint64_t *out);
int cy_size(struct cfg_ctx *ctx, const struct cy_node *n, uint64_t min, uint64_t max,
	    uint64_t *out);
int cy_duration(struct cfg_ctx *ctx, const struct cy_node *n, uint64_t min_ms,
		uint64_t max_ms, uint64_t *out);
int cy_enum(struct cfg_ctx *ctx, const struct cy_node *n, const char *const *names, int *out);

/* Pure parsers behind cy_size and cy_duration (0 or -EINVAL / -ERANGE). */
int cfg_parse_size(const char *s, uint64_t *out);
int cfg_parse_duration_ms(const char *s, uint64_t *out);

/* Replaces *field with a copy of s (NULL allowed). Returns 0 or -ENOMEM (ctx->oom set). */
int cfg_set_str(struct cfg_ctx *ctx, char **field, const char *s);

/* ---- table-driven mappings -------------------------------------------------------- */

enum cfg_kind {
	CK_STR,        /* char *, non-empty */
	CK_STR_NULL,   /* char *, null allowed */
	CK_BOOL,       /* bool */
	CK_UINT,       /* unsigned (field of width cfg_key.width) within min..max */
	CK_SIZE,       /* uint64_t bytes */
	CK_DURATION,   /* uint64_t ms */
	CK_ENUM,       /* enum stored as int-sized, names[] in value order */
	CK_CUSTOM,     /* fn does it all */
};

struct cfg_key;
typedef int (*cfg_custom_fn)(struct cfg_ctx *ctx, const struct cy_node *val, void *base,
			     const struct cfg_key *k);

struct cfg_key {
	const char *name;
	enum cfg_kind kind;
	size_t off;                    /* offset of the field in base */
	size_t width;                  /* CK_UINT: sizeof the field (4 or 8) */
	uint64_t min, max;             /* CK_UINT, CK_SIZE, CK_DURATION */
	const char *const *names;      /* CK_ENUM: NULL-terminated */
	cfg_custom_fn fn;              /* CK_CUSTOM; also a checker after the others, if set */
};

/*
 * Applies mapping node map to the struct at base using keys[] (terminated by a NULL
 * name). Unknown keys are errors naming the section. Returns 0, -EINVAL (errors
 * reported) or -ENOMEM.
 */
int cfg_walk(struct cfg_ctx *ctx, const struct cy_node *map, const struct cfg_key *keys,
	     void *base, const char *section);

/* ---- lists of strings (conf/list.c) --------------------------------------------- */

/* What the items of a list of strings must be. */
struct cfg_list_spec {
	const char *what;      /* "a list of URLs": the error when the value is not a list */
	size_t max;            /* at most this many items; 0: CY_MAX_ITEMS (the parser's) */
	bool (*ok)(const char *s, const void *arg);   /* an item's check; NULL: any string */
	const void *arg;       /* passed to ok */
	const char *bad;       /* the error at an item ok refuses */
};

/*
 * Reads the list v into a new NULL-terminated array of copies that replaces *list (whose
 * *n strings are freed): each item a string spec->ok accepts, an error at every other.
 * Returns 0; -EINVAL with the errors reported (*list then holds the accepted items; a
 * value that is not a list, or a longer one, leaves *list as it was); -ENOMEM (ctx->oom).
 */
int cfg_str_list(struct cfg_ctx *ctx, const struct cy_node *v,
		 const struct cfg_list_spec *spec, char ***list, size_t *n);
/* Frees list's n strings and list (NULL allowed). */
void cfg_str_list_free(char **list, size_t n);

/* ---- field checkers (cfg_key.fn; conf/check.c) ---------------------------------- */

/* True when s holds a control byte (or a space, unless space_ok). */
bool cfg_has_ctl_or_space(const char *s, bool space_ok);
/* The char * field k names in base (CK_STR, CK_STR_NULL). */
const char *cfg_field_str(const void *base, const struct cfg_key *k);
/* The field is NULL or an absolute path below PATH_MAX without control bytes. */
int cfg_check_path(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		   const struct cfg_key *k);

#endif
