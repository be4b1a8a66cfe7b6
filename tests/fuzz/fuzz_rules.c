/*
 * libFuzzer target: the detection rules loader (detect/detect.h) on arbitrary bytes.
 * A set that loads is also run over a few journal lines, so conditions and templates
 * compiled from fuzzed YAML are evaluated too. Seeds: the built-in rules/.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const lines[] = {
	"{\"seq\":1,\"event\":\"session.create\",\"session_id\":\"s\",\"tenant_id\":\"t\","
	"\"user_id\":\"u\"}",
	"{\"seq\":2,\"event\":\"process.exec\",\"ts\":\"2026-06-29T10:00:00.0Z\","
	"\"session_id\":\"s\",\"pid\":5,\"ppid\":4,\"uid\":0,\"euid\":0,\"cmd\":\"curl\","
	"\"args\":[\"-s\",\"x\"],\"stdin\":\"tty\",\"stdout\":\"pipe:[1]\"}",
	"{\"seq\":3,\"event\":\"process.exec\",\"session_id\":\"s\",\"pid\":6,\"cmd\":\"sh\","
	"\"args\":[],\"stdin\":\"pipe:[1]\",\"stdout\":\"tty\",\"uid\":1}",
	"{\"seq\":4,\"event\":\"file.read\",\"session_id\":\"s\",\"path\":\"/h/.ssh/id_rsa\","
	"\"pid\":5,\"uid\":0}",
	"{\"seq\":5,\"event\":\"net.connect\",\"session_id\":\"s\",\"pid\":5,"
	"\"dst\":{\"ip\":\"198.18.0.1\",\"port\":853},\"domain\":\"a.test\",\"verdict\":\"blocked\"}",
	"{\"seq\":6,\"event\":\"file.delete\",\"session_id\":\"s\",\"path\":\"/w/x\"}",
	"{\"seq\":7,\"event\":\"session.terminate\",\"session_id\":\"s\",\"reason\":\"oom\"}",
};

static int on_alert(void *ctx, const struct detect_alert *a)
{
	(void)ctx;
	return a->rule && a->summary ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct detect_settings s = { .rate_max = 5, .on_alert = on_alert };
	struct detect_rules *r = NULL;
	struct detect *d = NULL;
	char line[1024];
	int ret = detect_rules_load_buffer(&r, "fuzz", (const char *)data, size, NULL, &errs);

	/* A loaded set and errors are exclusive. */
	if ((ret == 0) != (config_errors_count(&errs) == 0) && ret != -ENOMEM)
		abort();
	for (size_t i = 0; i < config_errors_count(&errs); i++)
		config_error_format(config_errors_at(&errs, i), line, sizeof(line));
	config_errors_free(&errs);
	if (ret != 0) {
		detect_rules_free(r);
		return 0;
	}
	if (detect_new(&d, &s, r) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		(void)detect_feed_line(d, lines[i], strlen(lines[i]));
	detect_free(d);
	return 0;
}
