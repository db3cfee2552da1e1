/* the fast path of _xml_json.c (see _xml_fast.cc): the JSON text of an XML document the fast
 * path can vouch for, or NULL: *declined set when it declines (nothing raised: the strict
 * path decides), clear when out of memory (MemoryError raised) */
#ifndef PORTICO_XML_FAST_H
#define PORTICO_XML_FAST_H
#include <Python.h>
#ifdef __cplusplus
extern "C" {
#endif
PyObject *xml_fast_to_json(const char *data, Py_ssize_t size, int style, const char *soap, int *declined);
#ifdef __cplusplus
}
#endif
#endif
