/*
 * What program an exec really ran, on what the caller cannot choose: the exe the kernel
 * reports (not argv[0], which `exec -a` sets), for the dynamic loader the program it
 * loads (`ld-linux-x86-64.so.2 /usr/bin/curl`: the first argument that is not a loader
 * option), and whether that file is a well-known downloader, shell or interpreter under
 * another name: the same inode (a hard link) or a byte-identical copy (same size, then
 * the same SHA-256). The known files are read once at start; a copy is hashed only when
 * its size matches one of them, and the answer is remembered by inode and mtime.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "sensors/process/proc_int.h"

#define EXEID_CACHE 64
#define EXEID_UNCHECKED (-2)          /* lookup: the file could not be read */
#define EXEID_MAX_BYTES (64u << 20)   /* bigger files are not hashed */

struct known {
	const char *name;
	dev_t dev;
	ino_t ino;
	off_t size;
	unsigned char sha[32];
	bool loader;                 /* the dynamic loader: never a known_as name */
};

struct seen {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	int known;                   /* index in the table, -1 none; slot unused: dev 0 */
};

static const char *const names[] = {
	"curl", "wget", "nc.openbsd", "nc.traditional", "ncat", "socat", "aria2c", "openssl",
	"base64", "xxd", "dash", "bash", "zsh", "ksh", "busybox", "perl", "ruby", "node",
	"php", "python3", "python3.11", "python3.12", "python3.13", "python2", "python",
};
static const char *const dirs[] = { "/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin" };
/*
 * The dynamic loaders, known by identity too: a copy of ld-linux-x86-64.so.2 named
 * `runner` runs `runner /usr/bin/curl URL` as the loader does, and was reported with
 * program "runner" and exe_known_as null (the name test alone missed it).
 */
static const char *const loaders[] = {
	"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux.so.2", "/lib/ld-linux-aarch64.so.1",
	"/lib/ld-linux-armhf.so.3", "/lib64/ld64.so.2", "/lib/ld-musl-x86_64.so.1",
	"/lib/ld-musl-aarch64.so.1",
};

static struct known table[sizeof(names) / sizeof(names[0]) + sizeof(loaders) / sizeof(loaders[0])];
static size_t n_table;
static struct seen cache[EXEID_CACHE];
static size_t cache_next;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int sha_fd(int fd, unsigned char out[32])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned char buf[65536];
	unsigned int n = 0;
	ssize_t got;
	int ret = -EIO;

	if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1)
		goto out;
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		if (EVP_DigestUpdate(c, buf, (size_t)got) != 1)
			goto out;
	if (got == 0 && EVP_DigestFinal_ex(c, out, &n) == 1 && n == 32)
		ret = 0;
out:
	EVP_MD_CTX_free(c);
	return ret;
}

/* Adds the file at path under name; false when it cannot be opened. */
static bool load_file(const char *name, const char *path, bool loader)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= EXEID_MAX_BYTES) {
		struct known *k = &table[n_table];

		for (size_t i = 0; i < n_table; i++)
			if (table[i].dev == st.st_dev && table[i].ino == st.st_ino) {
				close(fd);
				return true;   /* a link of one already there (python3 -> 3.11) */
			}
		if (sha_fd(fd, k->sha) == 0) {
			k->name = name;
			k->dev = st.st_dev;
			k->ino = st.st_ino;
			k->size = st.st_size;
			k->loader = loader;
			n_table++;
		}
	}
	close(fd);
	return true;
}

static void load_one(const char *name)
{
	char path[PATH_MAX];

	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[d], name);
		if (load_file(name, path, false))
			return;
	}
}

static void load(void)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		load_one(names[i]);
	for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++)
		load_file("ld.so", loaders[i], true);
}

void exeid_init(void)
{
	pthread_once(&once, load);
}

/* The table index of the file open at fd, -1 (none), or EXEID_UNCHECKED. Under mu. */
static int lookup_locked(int fd)
{
	unsigned char sha[32];
	struct stat st;
	int found = -1;
	bool sized = false;

	if (fstat(fd, &st) != 0)
		return EXEID_UNCHECKED;
	if (!S_ISREG(st.st_mode))
		goto out;
	for (size_t i = 0; i < n_table; i++) {
		if (table[i].dev == st.st_dev && table[i].ino == st.st_ino) {
			found = (int)i;
			goto out;
		}
		sized |= table[i].size == st.st_size;
	}
	if (!sized)
		goto out;
	for (size_t i = 0; i < EXEID_CACHE; i++)
		if (cache[i].dev == st.st_dev && cache[i].ino == st.st_ino &&
		    cache[i].mtime.tv_sec == st.st_mtim.tv_sec &&
		    cache[i].mtime.tv_nsec == st.st_mtim.tv_nsec) {
			found = cache[i].known;
			goto out;
		}
	if (sha_fd(fd, sha) != 0)
		return EXEID_UNCHECKED;   /* not remembered: a later read may succeed */
	for (size_t i = 0; i < n_table; i++)
		if (table[i].size == st.st_size && memcmp(table[i].sha, sha, 32) == 0)
			found = (int)i;
	cache[cache_next] = (struct seen){ st.st_dev, st.st_ino, st.st_mtim, found };
	cache_next = (cache_next + 1) % EXEID_CACHE;
out:
	return found;
}

/* Whether the link at proc names path (or path " (deleted)"). */
static bool same_link(const char *proc, const char *path)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(proc, buf, sizeof(buf) - 1);
	size_t plen = strlen(path);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strncmp(buf, path, plen) == 0 && (buf[plen] == '\0' ||
						 strcmp(buf + plen, " (deleted)") == 0);
}

/* The table index of the program at path (with is_exe, the file /proc/PID/exe holds; with
 * pinned >= 0, the exe pinned O_PATH at the exec), -1, or EXEID_UNCHECKED. */
static int lookup(pid_t pid, int pinned, const char *path, bool is_exe)
{
	char proc[64];
	int i = -1, fd = -1;

	exeid_init();
	if (pinned >= 0) {   /* opened for reading through its link */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pinned);
		fd = open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return EXEID_UNCHECKED;
	} else if (!path || path[0] != '/') {
		return EXEID_UNCHECKED;
	}
	/* The running file itself when the process is still there: right in its own mount
	 * namespace and when the path was deleted or replaced since. */
	if (fd < 0 && is_exe && pid > 0) {
		snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)pid);
		fd = open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 && !same_link(proc, path)) {
			close(fd);   /* the pid is another program's now */
			fd = -1;
		}
	}
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);   /* NONBLOCK: a FIFO */
	if (fd < 0)
		return EXEID_UNCHECKED;
	pthread_mutex_lock(&mu);
	i = lookup_locked(fd);
	pthread_mutex_unlock(&mu);
	close(fd);
	return i;
}

const char *exeid_known_as(pid_t pid, const char *path, bool is_exe, bool *checked)
{
	int i = lookup(pid, -1, path, is_exe);

	*checked = i != EXEID_UNCHECKED;
	return i >= 0 && !table[i].loader ? table[i].name : NULL;
}

const char *exeid_exe(pid_t pid, int exe_fd, const char *exe, bool *loader, bool *checked)
{
	int i = lookup(pid, exe_fd, exe, true);

	*loader = exeid_is_loader(exe) || (i >= 0 && table[i].loader);
	*checked = i != EXEID_UNCHECKED;
	return i >= 0 && !table[i].loader ? table[i].name : NULL;
}

bool exeid_is_loader(const char *exe)
{
	const char *b = exe ? strrchr(exe, '/') : NULL;

	b = b ? b + 1 : exe;
	return b && (strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld64.so", 7) == 0 ||
		     strcmp(b, "ld.so") == 0 || (strncmp(b, "ld-", 3) == 0 && strstr(b, ".so")));
}

const char *exeid_loaded(const char *cmdline, size_t len, size_t *alen)
{
	/* Loader options that take a value (ld.so(8)). */
	static const char *const with_arg[] = { "--library-path", "--preload", "--audit",
						"--argv0", "--inhibit-rpath", "--glibc-hwcaps-prepend",
						"--glibc-hwcaps-mask", NULL };
	const char *arg;
	size_t off = 0, n;
	bool skip = false, first = true;

	while (cmdline_next(cmdline, len, &off, &arg, &n)) {
		if (first) {   /* argv[0]: the loader itself */
			first = false;
			continue;
		}
		if (skip) {
			skip = false;
			continue;
		}
		if (n > 2 && arg[0] == '-' && arg[1] == '-') {
			for (size_t i = 0; with_arg[i]; i++)
				if (n == strlen(with_arg[i]) && memcmp(arg, with_arg[i], n) == 0)
					skip = true;
			continue;
		}
		*alen = n;
		return arg;
	}
	return NULL;
}
