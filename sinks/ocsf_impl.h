/* Internals of the OCSF renderer (sinks/ocsf*.c). */
#ifndef SANDGATE_SINKS_OCSF_IMPL_H
#define SANDGATE_SINKS_OCSF_IMPL_H

#include <jansson.h>

struct ocsf_map {
	const char *event;
	int class_uid;
	int activity_id;
	const char *activity_name;
};

/* The mapping of one event type; unknown types map to Base Event (class 0, 99). */
const struct ocsf_map *ocsf_map_of(const char *event);
const char *ocsf_class_name(int class_uid);

/* ocsf_class.c: fills the class-specific objects of o from the native event n. */
void ocsf_fill_class(json_t *o, json_t *n, const struct ocsf_map *m);

#endif
