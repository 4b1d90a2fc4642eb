// The names every template sees besides its context, as Hugging Face's
// environment has them: Jinja2's globals (range, dict, namespace, cycler,
// joiner) and the two Hugging Face adds: raise_exception(message), which
// refuses the conversation with the template's own message, and
// strftime_now(format), which reads the renderer's (injectable) clock.
#pragma once

#include "gateway/template/value.h"

namespace kvgate::jinja {

// Built once; shared by every render.
const DictData& builtin_globals();

}  // namespace kvgate::jinja
