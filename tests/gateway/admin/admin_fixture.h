// What the admin suites share: the pipeline stack of their suite
// (pipeline_fixture.h), the admin token it was started with, a tenant and
// key of each test's own, and a completion run to its end for that tenant.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "gateway/serving/admin_token.h"
#include "tests/gateway/serving/pipeline_fixture.h"
#include "tests/gateway/serving/recording_sink.h"

namespace kvgate::admin::testing {

template <class Suite>
class AdminSuite : public serving::testing::SuiteStack<Suite> {
  using Base = serving::testing::SuiteStack<Suite>;

 protected:
  static void SetUpTestSuite() {
    Base::SetUpTestSuite();
    auto [token, plaintext] = serving::AdminToken::create(Base::stack().dir_.sub("admin-token"));
    token_.emplace(std::move(token));
    admin_token_ = std::move(plaintext);
  }
  static void TearDownTestSuite() {
    token_.reset();
    Base::TearDownTestSuite();
  }

  void SetUp() override {
    id_ = this->tenant_id();
    key_ = Base::stack().new_key(id_);
  }

  tenancy::Tenancy& tenancy() { return *Base::stack().tenancy_; }

  // A greedy completion of kStoryPrompt for the test's tenant, run to its
  // end and recorded: its request id.
  std::string run_request(int32_t max_tokens) {
    serving::testing::PipelineStack& s = Base::stack();
    serving::ServeRequest r;
    r.who = *tenancy().authenticate(key_);
    r.request_id = "req_" + id_ + "_" + std::to_string(++requests_);
    r.model = serving::testing::kModelId;
    r.prompt = s.tokenizer_->encode(serving::testing::kStoryPrompt, {.add_bos = true, .parse_special = false});
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    r.ignore_eos = true;
    auto sink = std::make_shared<serving::RecordingSink>();
    EXPECT_TRUE(std::holds_alternative<RequestId>(s.pipeline_->start(r, sink)));
    EXPECT_TRUE(sink->wait().recorded);
    return r.request_id;
  }

  static inline std::optional<serving::AdminToken> token_;
  static inline std::string admin_token_;
  std::string id_;   // the test's tenant
  std::string key_;  // its API key

 private:
  int requests_ = 0;
};

}  // namespace kvgate::admin::testing
