/* speechd/ssml_text.c: what sd_kokoro makes of the SSML speech-dispatcher sends (plain text, index mark
 * offsets, entities, dropped tags) and of plain text. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "speechd/ssml_text.h"

static int failures = 0;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      failures++;                                                        \
    }                                                                    \
  } while (0)

int main(void) {
  ssml_text t;
  CHECK(ssml_text_parse("<speak>Hello <mark name=\"m1\"/>world &amp; &lt;friends&gt; &#233;&#x263A;.<mark name='end'/></speak>",
                        &t) == 0);
  CHECK(strcmp(t.text, "Hello world & <friends> \xc3\xa9\xe2\x98\xba.") == 0);
  CHECK(t.n_marks == 2);
  if (t.n_marks == 2) {
    CHECK(strcmp(t.marks[0].name, "m1") == 0 && t.marks[0].offset == 6);
    CHECK(strcmp(t.marks[1].name, "end") == 0 && t.marks[1].offset == strlen(t.text));
  }
  ssml_text_free(&t);

  CHECK(ssml_text_parse("Plain <not a tag> & text", &t) == 0); /* not SSML: as is */
  CHECK(strcmp(t.text, "Plain <not a tag> & text") == 0 && t.n_marks == 0);
  ssml_text_free(&t);

  CHECK(ssml_text_parse("<speak><s>One.</s><s>Two.</s><break time='1s'/>Three &bogus; <mark name=x/></speak>", &t) == 0);
  CHECK(strcmp(t.text, "One. Two. Three &bogus; ") == 0);
  CHECK(t.n_marks == 0); /* an unquoted attribute is not a mark name */
  ssml_text_free(&t);

  CHECK(ssml_text_parse("<speak>cut <mark name=\"a\"", &t) == 0); /* unterminated tag: rest dropped */
  CHECK(strcmp(t.text, "cut ") == 0);
  ssml_text_free(&t);

  if (failures == 0) printf("ssml_text: ok\n");
  return failures ? 1 : 0;
}
