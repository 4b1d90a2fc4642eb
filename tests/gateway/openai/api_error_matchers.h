// Test helpers: run a parse and check the ApiError it throws, field by field.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "gateway/openai/api_error.h"

namespace kvgate::openai::testing {

// The ApiError `f` throws; fails the test (and returns a 0-status error)
// if it throws nothing or something else.
inline ApiError error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-ApiError: " << e.what();
    return ApiError(0, e.what(), "");
  }
  ADD_FAILURE() << "threw nothing";
  return ApiError(0, "", "");
}

}  // namespace kvgate::openai::testing
