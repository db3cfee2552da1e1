/* portico.gateway.plugins._json_xml in C: the same function, the same bytes, as _json_xml.py
 * (read its docstring first: it is the reference, the mapping is _xml_mapping's XmlWriter, and
 * tests/gateway/plugins/test_json_xml.py checks that both give the same XML text, or the same
 * refusal, for generated documents).
 *
 * Why C: json-to-xml converts a whole answer per request. The reference writes it piece by
 * piece into a list of Python strings, building a path string for each element (for its error
 * messages) and checking each name with a regular expression: a 10 KB answer cost 4.6 million
 * instructions (callgrind). Here orjson parses (a maintained parser: no JSON parser of our own)
 * and the resulting dicts, lists and strings are walked in C, the XML bytes written straight
 * into the answer's bytes object.
 *
 * What this module writes itself is only the common case: it hands the document to the
 * reference whenever it meets anything else, and the reference's answer (its bytes, or its
 * refusal with its exact message) is the answer:
 *   - a document orjson refuses (not JSON, or JSON orjson does not take: integers past 64
 *     bits, lone surrogates...): the reference parses it and says why, or converts it;
 *   - anything the writer would refuse (a name that is no XML name, a prefix not declared, a
 *     character XML cannot carry, nesting past MAX_DEPTH...): the reference raises its
 *     NotRepresentable, naming the property at fault, which this module does not track;
 *   - a non-ASCII name (the reference's regular expression decides what is an XML name
 *     outside ASCII), more namespace prefixes in scope than SCOPE_MAX.
 * Numbers: the reference writes a number as the text it was written in (1.10 stays 1.10),
 * which orjson does not keep. An integer's decimal text is its source text, but for -0 (read
 * as 0: a 0 where the document holds "-0" anywhere counts as unknown); a float's is not
 * known at all. So a document holding a float, or such a 0, is parsed again by the
 * reference's parser (numbers as their text) and that is walked here: still no Python
 * string per piece written, only the second parse.
 *
 * Nothing is kept between calls. Built by scripts/build_native.py beside the mypyc modules,
 * used while that build is current.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define UNCHANGED 0
#define CAMEL 1
#define PASCAL 2
#define MAX_DEPTH 256 /* _xml_mapping.MAX_DEPTH */
#define SCOPE_MAX 64  /* prefixes in scope at once; more: the reference's sets */

/* a walk's outcome: written, or not this module's case */
#define OK 0
#define FAILED -1   /* a Python error is set (memory) */
#define REFERENCE 1 /* the reference converts the document (see the header) */
#define NUMBERS 2   /* a number whose source text is not known: parse again, numbers as text */

/* set once, at import: orjson.loads, _xml_mapping's parse_json and json_document_to_xml (the
 * reference) */
static PyObject *LOADS, *PARSE_JSON, *REFERENCE_WRITER;

/* ------------------------------------------------------------------ growable memory */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    PyObject *bytes; /* the bytes object holding data (the answer, written in place) */
} Buf;

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int buf_grow(Buf *b, Py_ssize_t more) {
    if (more > PY_SSIZE_T_MAX / 2 - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t cap = b->cap * 2;
    if (cap < b->len + more) cap = b->len + more;
    if (_PyBytes_Resize(&b->bytes, cap) < 0) { /* (it freed the bytes) */
        b->data = NULL;
        b->len = b->cap = 0;
        return -1;
    }
    b->data = PyBytes_AS_STRING(b->bytes);
    b->cap = cap;
    return 0;
}

static inline int buf_reserve(Buf *b, Py_ssize_t more) {
    return more <= b->cap - b->len ? 0 : buf_grow(b, more);
}

static inline int buf_put(Buf *b, const void *s, Py_ssize_t n) {
    if (n == 0) return 0;
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

static inline int buf_byte(Buf *b, char c) {
    if (buf_reserve(b, 1) < 0) return -1;
    b->data[b->len++] = c;
    return 0;
}

#define PUT(b, s) buf_put((b), (s), (Py_ssize_t)(sizeof(s) - 1))

/* ------------------------------------------------------------------ names */

/* ASCII XML name characters (XML 1.0 NameStartChar / NameChar, the colon apart) */
static unsigned char NAME_START[128], NAME_CHAR[128];

static void names_init(void) {
    for (int c = 'A'; c <= 'Z'; c++) NAME_START[c] = NAME_CHAR[c] = 1;
    for (int c = 'a'; c <= 'z'; c++) NAME_START[c] = NAME_CHAR[c] = 1;
    NAME_START['_'] = NAME_CHAR['_'] = 1;
    for (int c = '0'; c <= '9'; c++) NAME_CHAR[c] = 1;
    NAME_CHAR['-'] = NAME_CHAR['.'] = 1;
}

static int is_ncname(const char *s, Py_ssize_t n) {
    if (n == 0 || !NAME_START[(unsigned char)s[0]]) return 0;
    for (Py_ssize_t i = 1; i < n; i++)
        if (!NAME_CHAR[(unsigned char)s[i]]) return 0;
    return 1;
}

/* an ASCII string's characters, or NULL (not a str, or not ASCII: the reference's case) */
static inline const char *ascii(PyObject *s, Py_ssize_t *n) {
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s)) return NULL;
    *n = PyUnicode_GET_LENGTH(s);
    return (const char *)PyUnicode_1BYTE_DATA(s);
}

/* _checked_name: 1 if s is NCName(:NCName)?, its prefix's length in *prefix (0 for none) */
static int qname(const char *s, Py_ssize_t n, Py_ssize_t *prefix) {
    const char *colon = memchr(s, ':', (size_t)n);
    if (colon == NULL) {
        *prefix = 0;
        return is_ncname(s, n);
    }
    Py_ssize_t p = colon - s;
    *prefix = p;
    return is_ncname(s, p) && is_ncname(colon + 1, n - p - 1);
}

static inline int is_separator(char c) { return c == '-' || c == '_' || c == '.'; }
static inline int is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static inline char lower(char c) { return is_upper(c) ? (char)(c + 32) : c; }
static inline char upper(char c) { return c >= 'a' && c <= 'z' ? (char)(c - 32) : c; }

/* _xml_mapping.styled of an ASCII name, into out (room for n bytes: never longer); its
 * length */
static Py_ssize_t styled(const char *s, Py_ssize_t n, int style, char *out) {
    Py_ssize_t len = 0, i = 0;
    int first = 1;
    while (i < n) {
        while (i < n && is_separator(s[i])) i++;
        Py_ssize_t start = i;
        while (i < n && !is_separator(s[i])) i++;
        Py_ssize_t size = i - start;
        if (size == 0) break;
        const char *word = s + start;
        if (first && style == CAMEL) { /* _lower_head */
            Py_ssize_t run = 0;
            while (run < size && is_upper(word[run])) run++;
            Py_ssize_t lowered = (run == size || run == 1) ? run : (run == 0 ? 0 : run - 1);
            for (Py_ssize_t k = 0; k < size; k++)
                out[len++] = k < lowered ? lower(word[k]) : word[k];
        } else {
            out[len++] = upper(word[0]);
            memcpy(out + len, word + 1, (size_t)(size - 1));
            len += size - 1;
        }
        first = 0;
    }
    if (first) { /* no word: the name as it is */
        memcpy(out, s, (size_t)n);
        return n;
    }
    return len;
}

/* ------------------------------------------------------------------ the writer */

typedef struct {
    const char *name;
    Py_ssize_t len;
} Prefix;

/* an element name as written, remembered for the call: keyed by the key object (a dict holds
 * it, alive and unchanged for the call; orjson gives a repeated key as one object) */
#define NAME_SLOTS 64
#define NAME_CACHED 56
typedef struct {
    PyObject *key;
    Py_ssize_t prefix; /* its prefix's length (0 for none) */
    Py_ssize_t len;
    char text[NAME_CACHED];
} Name;

typedef struct {
    Buf out;
    Name names[NAME_SLOTS];
    int style;
    PyObject *item;    /* array_item_name */
    Prefix scope[SCOPE_MAX];
    int scoped;        /* entries of scope in use */
    const char *source; /* the JSON text */
    Py_ssize_t source_len;
    int zero_unknown;  /* the document holds "-0", so an integer 0 may have been written so:
                        * -1 until a 0 asks (a scan of the whole text, for a rare case) */
    char name[256];    /* a styled name (longer names are written as the reference would:
                        * through it) */
} Writer;

static int in_scope(const Writer *w, int count, const char *p, Py_ssize_t n) {
    for (int k = count - 1; k >= 0; k--)
        if (w->scope[k].len == n && memcmp(w->scope[k].name, p, (size_t)n) == 0) return 1;
    return 0;
}

/* the bytes escaping looks at: those it replaces, the C0 controls XML cannot carry, and
 * 0xEF (U+FFFE and U+FFFF begin with it); in text, and in attribute values */
static unsigned char IN_TEXT[256], IN_ATTRIBUTE[256];

static void escapes_init(void) {
    for (int c = 0; c < 0x20; c++) IN_TEXT[c] = IN_ATTRIBUTE[c] = 1;
    IN_TEXT['\t'] = IN_TEXT['\n'] = 0;
    IN_TEXT['&'] = IN_TEXT['<'] = IN_TEXT['>'] = IN_TEXT[0xEF] = 1;
    IN_ATTRIBUTE['&'] = IN_ATTRIBUTE['<'] = IN_ATTRIBUTE['>'] = IN_ATTRIBUTE[0xEF] = 1;
    IN_ATTRIBUTE['"'] = 1;
}

/* escaped text (attribute: also " and the whitespace an attribute value would normalize);
 * REFERENCE for a character XML cannot carry */
static int escaped(Writer *w, const char *s, Py_ssize_t n, int attribute) {
    Buf *b = &w->out;
    const unsigned char *table = attribute ? IN_ATTRIBUTE : IN_TEXT;
    Py_ssize_t start = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!table[c]) continue;
        const char *entity;
        Py_ssize_t size;
        switch (c) {
        case '&': entity = "&amp;"; size = 5; break;
        case '<': entity = "&lt;"; size = 4; break;
        case '>': entity = "&gt;"; size = 4; break;
        case '\r': entity = "&#13;"; size = 5; break;
        case '"': entity = "&quot;"; size = 6; break;
        case '\n': entity = "&#10;"; size = 5; break;
        case '\t': entity = "&#9;"; size = 4; break;
        case 0xEF:
            if (i + 2 < n && (unsigned char)s[i + 1] == 0xBF &&
                ((unsigned char)s[i + 2] & 0xFE) == 0xBE)
                return REFERENCE; /* U+FFFE, U+FFFF */
            continue;
        default:
            return REFERENCE; /* C0 controls but tab, LF, CR */
        }
        if (buf_put(b, s + start, i - start) < 0 || buf_put(b, entity, size) < 0) return FAILED;
        start = i + 1;
    }
    return buf_put(b, s + start, n - start) < 0 ? FAILED : OK;
}

/* _scalar_text + escaping: a str, a bool, an integer; a float is NUMBERS, anything else the
 * reference's refusal */
static int scalar(Writer *w, PyObject *value, int attribute) {
    if (PyUnicode_CheckExact(value)) {
        Py_ssize_t n;
        const char *s;
        if (PyUnicode_IS_ASCII(value)) {
            s = (const char *)PyUnicode_1BYTE_DATA(value);
            n = PyUnicode_GET_LENGTH(value);
        } else {
            s = PyUnicode_AsUTF8AndSize(value, &n);
            if (s == NULL) { /* a lone surrogate: XML cannot carry it */
                PyErr_Clear();
                return REFERENCE;
            }
        }
        return escaped(w, s, n, attribute);
    }
    if (value == Py_True) return PUT(&w->out, "true") < 0 ? FAILED : OK;
    if (value == Py_False) return PUT(&w->out, "false") < 0 ? FAILED : OK;
    if (PyLong_CheckExact(value)) {
        int overflow;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow) return NUMBERS;
        if (number == 0) {
            if (w->zero_unknown < 0)
                w->zero_unknown = memmem(w->source, (size_t)w->source_len, "-0", 2) != NULL;
            if (w->zero_unknown) return NUMBERS;
        }
        char text[32];
        int size = snprintf(text, sizeof text, "%lld", number);
        return buf_put(&w->out, text, size) < 0 ? FAILED : OK;
    }
    if (PyFloat_CheckExact(value)) return NUMBERS;
    return REFERENCE;
}

static int element(Writer *w, PyObject *key, PyObject *value, int depth);

/* member: an array is its elements repeated */
static int member(Writer *w, PyObject *key, PyObject *value, int depth) {
    if (PyList_CheckExact(value)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            int status = element(w, key, PyList_GET_ITEM(value, i), depth);
            if (status != OK) return status;
        }
        return OK;
    }
    return element(w, key, value, depth);
}

/* XmlWriter._styled: the name to write for an ASCII name with a prefix of p bytes */
static int written_name(Writer *w, const char *s, Py_ssize_t n, Py_ssize_t p, const char **out,
                        Py_ssize_t *size) {
    *out = s;
    *size = n;
    if (w->style == UNCHANGED) return OK;
    if (n > (Py_ssize_t)sizeof w->name) return REFERENCE;
    const char *local = p ? s + p + 1 : s;
    Py_ssize_t local_len = p ? n - p - 1 : n;
    char *name = w->name;
    if (p) memcpy(name, s, (size_t)p + 1);
    char *styled_local = p ? name + p + 1 : name;
    Py_ssize_t len = styled(local, local_len, w->style, styled_local);
    if (len != local_len || memcmp(styled_local, local, (size_t)len) != 0) {
        if (!is_ncname(styled_local, len)) return OK; /* as it is (`_1a` → `1a`) */
    }
    *out = name;
    *size = (p ? p + 1 : 0) + len;
    return OK;
}

/* whether value (a dict) declares prefix p itself: an `@xmlns:p` key, whatever its value */
static int declares(PyObject *value, const char *p, Py_ssize_t n) {
    Py_ssize_t pos = 0;
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        Py_ssize_t size;
        const char *s = ascii(key, &size);
        if (s != NULL && size == n + 7 && memcmp(s, "@xmlns:", 7) == 0 &&
            memcmp(s + 7, p, (size_t)n) == 0)
            return 1;
    }
    return 0;
}

/* XmlWriter._attributes: the `@` properties as attributes; the prefixes they declare pushed
 * on the scope (*pushed: how many) */
static int attributes(Writer *w, PyObject *value, int *pushed) {
    Buf *b = &w->out;
    int outer = w->scoped;
    Py_ssize_t pos = 0;
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        Py_ssize_t n;
        const char *s = ascii(key, &n);
        if (s == NULL) return REFERENCE;
        if (n == 0 || s[0] != '@') continue;
        if (item == Py_None) continue;
        s++;
        n--;
        Py_ssize_t p;
        const char *name = s;
        Py_ssize_t size = n;
        if (n >= 5 && memcmp(s, "xmlns", 5) == 0 && (n == 5 || s[5] == ':')) {
            if (n > 5) {
                if (!qname(s + 6, n - 6, &p)) return REFERENCE;
                if (w->scoped == SCOPE_MAX) return REFERENCE;
                w->scope[w->scoped].name = s + 6;
                w->scope[w->scoped].len = n - 6;
                w->scoped++;
                (*pushed)++;
            }
        } else {
            if (!qname(s, n, &p)) return REFERENCE;
            int status = written_name(w, s, n, p, &name, &size);
            if (status != OK) return status;
            if (p && !in_scope(w, outer, s, p) && !declares(value, s, p)) return REFERENCE;
        }
        if (buf_byte(b, ' ') < 0 || buf_put(b, name, size) < 0 || PUT(b, "=\"") < 0)
            return FAILED;
        int status = scalar(w, item, 1);
        if (status != OK) return status;
        if (buf_byte(b, '"') < 0) return FAILED;
    }
    return OK;
}

/* an element's name checked (_checked_name) and as written (XmlWriter._styled), its prefix's
 * length in *p (the written name begins with the prefix); REFERENCE for a name this module
 * does not write */
static int element_name(Writer *w, PyObject *key, const char **name, Py_ssize_t *size,
                        Py_ssize_t *p) {
    Name *slot = &w->names[((uintptr_t)key >> 4) % NAME_SLOTS];
    if (slot->key == key) {
        *name = slot->text;
        *size = slot->len;
        *p = slot->prefix;
        return OK;
    }
    Py_ssize_t n;
    const char *s = ascii(key, &n);
    if (s == NULL || !qname(s, n, p)) return REFERENCE;
    int status = written_name(w, s, n, *p, name, size);
    if (status != OK) return status;
    if (*size <= NAME_CACHED) {
        memcpy(slot->text, *name, (size_t)*size);
        slot->key = key;
        slot->prefix = *p;
        slot->len = *size;
        *name = slot->text; /* (w->name is rewritten by the next name) */
    }
    return OK;
}

/* XmlWriter.element: <key> holding value */
static int element(Writer *w, PyObject *key, PyObject *value, int depth) {
    if (depth > MAX_DEPTH) return REFERENCE;
    const char *name;
    Py_ssize_t size, p;
    int status = element_name(w, key, &name, &size, &p);
    if (status != OK) return status;
    /* its prefix, for the scope: the key's own text (an ASCII str, element_name saw) */
    const char *s = (const char *)PyUnicode_1BYTE_DATA(key);
    Buf *b = &w->out;
    if (buf_byte(b, '<') < 0 || buf_put(b, name, size) < 0) return FAILED;
    if (PyDict_CheckExact(value)) {
        int pushed = 0;
        status = attributes(w, value, &pushed);
        if (status == OK && p && !in_scope(w, w->scoped, s, p)) status = REFERENCE;
        if (status != OK) return status;
        if (buf_byte(b, '>') < 0) return FAILED;
        int wrote = 0;
        Py_ssize_t pos = 0;
        PyObject *child, *item;
        while (PyDict_Next(value, &pos, &child, &item)) {
            Py_ssize_t k;
            const char *c = ascii(child, &k);
            if (c == NULL) return REFERENCE;
            if (k > 0 && c[0] == '@') continue;
            if (k == 5 && memcmp(c, "#text", 5) == 0) {
                if (item != Py_None) {
                    wrote = 1;
                    status = scalar(w, item, 0);
                    if (status != OK) return status;
                }
                continue;
            }
            status = member(w, child, item, depth + 1);
            if (status != OK) return status;
            /* (an empty array writes nothing: the element stays empty, as the reference's,
             * which counts what it wrote) */
            if (!PyList_CheckExact(item) || PyList_GET_SIZE(item) != 0) wrote = 1;
        }
        w->scoped -= pushed;
        if (!wrote) {
            b->data[b->len - 1] = '/';
            return buf_byte(b, '>') < 0 ? FAILED : OK;
        }
    } else {
        if (p && !in_scope(w, w->scoped, s, p)) return REFERENCE;
        if (value == Py_None) return PUT(b, "/>") < 0 ? FAILED : OK;
        if (buf_byte(b, '>') < 0) return FAILED;
        if (PyList_CheckExact(value)) {
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
                status = element(w, w->item, PyList_GET_ITEM(value, i), depth + 1);
                if (status != OK) return status;
            }
        } else {
            status = scalar(w, value, 0);
            if (status != OK) return status;
        }
    }
    /* the end tag: the name again (the children's names may have taken its slot, or
     * w->name) */
    status = element_name(w, key, &name, &size, &p);
    if (status != OK) return status;
    if (PUT(b, "</") < 0 || buf_put(b, name, size) < 0 || buf_byte(b, '>') < 0) return FAILED;
    return OK;
}

/* json_to_xml: an object of one element property is that element, anything else is wrapped in
 * root */
static int document(Writer *w, PyObject *value, PyObject *root) {
    if (PUT(&w->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>") < 0) return FAILED;
    if (PyDict_CheckExact(value) && PyDict_GET_SIZE(value) == 1) {
        Py_ssize_t pos = 0, n;
        PyObject *key, *content;
        PyDict_Next(value, &pos, &key, &content);
        const char *s = ascii(key, &n);
        if (s == NULL) return REFERENCE;
        if ((n == 0 || (s[0] != '@' && s[0] != '#')) && !PyList_CheckExact(content))
            return element(w, key, content, 1);
    }
    return element(w, root, value, 1);
}

/* one walk of a parsed document: its XML bytes, or NULL with *status (REFERENCE, NUMBERS;
 * FAILED with an error set) */
static PyObject *walk(PyObject *value, int style, PyObject *item, PyObject *root,
                      PyObject *data, int *status) {
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    Writer w;
    w.style = style;
    for (int k = 0; k < NAME_SLOTS; k++) w.names[k].key = NULL;
    w.item = item;
    w.scope[0].name = "xml";
    w.scope[0].len = 3;
    w.scoped = 1;
    w.source = PyBytes_AS_STRING(data);
    w.source_len = size;
    w.zero_unknown = -1;
    w.out.len = 0;
    w.out.cap = size + size / 4 + 128; /* the XML is a little longer than its JSON */
    w.out.bytes = PyBytes_FromStringAndSize(NULL, w.out.cap);
    if (w.out.bytes == NULL) {
        *status = FAILED;
        return NULL;
    }
    w.out.data = PyBytes_AS_STRING(w.out.bytes);
    *status = document(&w, value, root);
    if (*status != OK) {
        Py_XDECREF(w.out.bytes);
        return NULL;
    }
    if (_PyBytes_Resize(&w.out.bytes, w.out.len) < 0) {
        *status = FAILED;
        return NULL;
    }
    return w.out.bytes;
}

/* json_to_xml(data: bytes, style: int, item: str, root: str) -> bytes */
static PyObject *json_to_xml(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4 || !PyBytes_Check(args[0]) || !PyLong_Check(args[1]) ||
        !PyUnicode_Check(args[2]) || !PyUnicode_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "json_to_xml(data: bytes, style: int, item: str, root: str)");
        return NULL;
    }
    long style = PyLong_AsLong(args[1]);
    if (style == -1 && PyErr_Occurred()) return NULL;
    PyObject *data = args[0];
    PyObject *value = PyObject_CallOneArg(LOADS, data);
    if (value == NULL) { /* not JSON, or not orjson's: the reference says which */
        PyErr_Clear();
        return PyObject_Vectorcall(REFERENCE_WRITER, args, 4, NULL);
    }
    int status;
    PyObject *result = walk(value, (int)style, args[2], args[3], data, &status);
    Py_DECREF(value);
    if (status == NUMBERS) { /* numbers as their text: the reference's parser */
        value = PyObject_CallOneArg(PARSE_JSON, data);
        if (value == NULL) return NULL;
        result = walk(value, (int)style, args[2], args[3], data, &status); /* (no numbers) */
        Py_DECREF(value);
    }
    if (status == REFERENCE) return PyObject_Vectorcall(REFERENCE_WRITER, args, 4, NULL);
    return result; /* (NULL with the error set when FAILED) */
}

/* ------------------------------------------------------------------ the module */

static PyMethodDef METHODS[] = {
    {"json_to_xml", (PyCFunction)(void (*)(void))json_to_xml, METH_FASTCALL,
     "json_to_xml(data, style, item, root): the XML text of a JSON document (see "
     "_json_xml.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "portico.gateway.plugins._json_xml",
    "JSON to XML text for json-to-xml, orjson's objects walked in C (see _json_xml.py).", -1,
    METHODS,
};

static PyObject *attribute(const char *module, const char *name) {
    PyObject *found = PyImport_ImportModule(module);
    if (found == NULL) return NULL;
    PyObject *value = PyObject_GetAttrString(found, name);
    Py_DECREF(found);
    return value;
}

PyMODINIT_FUNC PyInit__json_xml(void) {
    names_init();
    escapes_init();
    LOADS = attribute("orjson", "loads");
    PARSE_JSON = attribute("portico.gateway.plugins._xml_mapping", "parse_json");
    REFERENCE_WRITER = attribute("portico.gateway.plugins._xml_mapping", "json_document_to_xml");
    if (LOADS == NULL || PARSE_JSON == NULL || REFERENCE_WRITER == NULL) return NULL;
    return PyModule_Create(&MODULE);
}
