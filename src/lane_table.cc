#include "lane_table.h"

#include <cstdint>
#include <utility>

namespace zcopy {

namespace {

void AppendSpan(std::string* key, const char* data, const HeadSpan& span) {
  // A length-prefixed field: no byte of a value can be mistaken for a
  // separator. The length in four bytes, not in digits: snprintf's six
  // calls were half the lane's user-space instructions per request.
  const auto length = static_cast<uint32_t>(span.length);
  const char prefix[5] = {span.present ? '1' : '0', static_cast<char>(length & 0xff),
                          static_cast<char>((length >> 8) & 0xff), static_cast<char>((length >> 16) & 0xff),
                          static_cast<char>(length >> 24)};
  key->append(prefix, sizeof prefix);
  if (span.present) key->append(data + span.offset, span.length);
}

}  // namespace

void AnswerKey(std::string* key, RequestMethod method, const char* data, const HeadSpan& target, const HeadSpan& host,
               const HeadSpan& accept_encoding, const HeadSpan& if_none_match, const HeadSpan& if_modified_since,
               const HeadSpan& range) {
  key->clear();  // its capacity kept: the lane's key of each request reuses one string
  key->reserve(32 + target.length + host.length + accept_encoding.length + if_none_match.length +
               if_modified_since.length + range.length);
  key->push_back(method == RequestMethod::kGet ? 'G' : 'H');
  AppendSpan(key, data, target);
  AppendSpan(key, data, host);
  AppendSpan(key, data, accept_encoding);
  AppendSpan(key, data, if_none_match);
  AppendSpan(key, data, if_modified_since);
  AppendSpan(key, data, range);
}

uint32_t AnswerTable::Add(RowPtr row) {
  auto old = by_key_.find(row->key);
  if (old != by_key_.end()) Forget(old->second->id);
  uint32_t id = next_id_++;
  if (next_id_ == 0) next_id_ = 1;
  row->id = id;
  by_id_[id] = row;
  by_key_[row->key] = row;
  return id;
}

void AnswerTable::Forget(uint32_t id) {
  auto found = by_id_.find(id);
  if (found == by_id_.end()) return;
  found->second->gone = true;
  by_key_.erase(found->second->key);
  by_id_.erase(found);
}

void AnswerTable::Clear() {
  for (auto& entry : by_id_) entry.second->gone = true;
  by_key_.clear();
  by_id_.clear();
}

RowIds AnswerTable::TakeHits() {
  RowIds ids;
  for (auto& entry : by_id_) {
    if (!entry.second->hit) continue;
    entry.second->hit = false;
    ids.push_back(entry.first);
  }
  return ids;
}

RowPtr AnswerTable::Find(const std::string& key) const {
  auto found = by_key_.find(key);
  return found == by_key_.end() ? nullptr : found->second;
}

}  // namespace zcopy
