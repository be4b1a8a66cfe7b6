/* /proc/PID/mountinfo lines (pure): the mount point, filesystem type and source. */
#include <errno.h>
#include <string.h>

#include "sensors/file/mountwatch.h"

/* Copies field f (len n) into out, decoding the kernel's \ooo escapes. 0 or -EINVAL. */
static int unescape(const char *f, size_t n, char *out, size_t outlen)
{
	size_t i = 0, k = 0;

	while (i < n) {
		char c = f[i++];

		if (c == '\\' && i + 3 <= n && f[i] >= '0' && f[i] <= '3' && f[i + 1] >= '0' &&
		    f[i + 1] <= '7' && f[i + 2] >= '0' && f[i + 2] <= '7') {
			c = (char)((f[i] - '0') * 64 + (f[i + 1] - '0') * 8 + (f[i + 2] - '0'));
			i += 3;
		}
		if (k + 1 >= outlen)
			return -EINVAL;
		out[k++] = c;
	}
	out[k] = '\0';
	return 0;
}

/* The next space-separated field of line[*i..len): its start and length. */
static bool field(const char *line, size_t len, size_t *i, const char **f, size_t *n)
{
	while (*i < len && line[*i] == ' ')
		(*i)++;
	if (*i >= len)
		return false;
	*f = line + *i;
	while (*i < len && line[*i] != ' ')
		(*i)++;
	*n = (size_t)(line + *i - *f);
	return true;
}

/* "MAJOR:MINOR" into m (0:0 when malformed). */
static void dev_field(const char *f, size_t n, struct mount_entry *m)
{
	unsigned v[2] = { 0, 0 };
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (f[i] == ':' && k == 0)
			k = 1;
		else if (f[i] >= '0' && f[i] <= '9' && v[k] < 0x1000000u)
			v[k] = v[k] * 10 + (unsigned)(f[i] - '0');
		else
			return;
	}
	m->dev_major = v[0];
	m->dev_minor = v[1];
}

int mountinfo_line(const char *line, size_t len, struct mount_entry *m)
{
	const char *f, *target = NULL;
	size_t i = 0, n, tlen = 0, k;

	m->ro = false;
	m->dev_major = m->dev_minor = 0;
	/* id, parent, major:minor, root, mount point, options, optional..., "-" */
	for (k = 0; k < 6; k++) {
		if (!field(line, len, &i, &f, &n))
			return -EINVAL;
		if (k == 2)
			dev_field(f, n, m);
		if (k == 4) {
			target = f;
			tlen = n;
		}
		if (k == 5)
			m->ro = n >= 2 && f[0] == 'r' && f[1] == 'o' && (n == 2 || f[2] == ',');
	}
	do {
		if (!field(line, len, &i, &f, &n))
			return -EINVAL;
	} while (!(n == 1 && f[0] == '-'));
	if (unescape(target, tlen, m->target, sizeof(m->target)) ||
	    !field(line, len, &i, &f, &n) || unescape(f, n, m->fstype, sizeof(m->fstype)) ||
	    !field(line, len, &i, &f, &n) || unescape(f, n, m->source, sizeof(m->source)))
		return -EINVAL;
	return 0;
}
