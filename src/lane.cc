#include "lane.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <uv.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "descriptors.h"
#include "errors.h"
#include "lane_table.h"
#include "pending_changes.h"
#include "plain_allocator.h"
#include "request_body.h"
#include "request_frame.h"
#include "request_head.h"
#include "tuning.h"
#include "unique_fd.h"

namespace zcopy {

namespace {

// One read of a connection's requests. What it does not consume waits in
// the connection's `pending` while an answer blocks (a body by sendfile, a
// lent request), so this bounds what a client that pipelines and reads
// nothing holds here (nginx reads requests into a 1 KiB buffer, 8 KiB ones
// for a long head); the rest waits in the kernel. A longer head is read on.
constexpr size_t kRequestReadBytes = 4 * 1024;
// One read of a body, or of what a lingering connection drains (a body's
// read stops at its end when its length is known: BodyFraming::ReadSize).
constexpr size_t kReadBytes = 64 * 1024;
constexpr int kAcceptsPerWake = 64;
constexpr int64_t kRevalidateMs = 1000;
constexpr uint64_t kSweepMs = 1000;
constexpr uint64_t kAcceptPauseMs = 100;
// A connection closed after an answer lingers (nginx's lingering_close): its
// write side shut, what the client still sends is read and dropped until it
// closes, or nothing came for kLingerQuietMs, or kLingerMs in all (nginx's
// lingering_timeout and lingering_time). Closing with unread bytes would
// send a reset, and a client's kernel drops the answer it has not read yet.
constexpr int64_t kLingerQuietMs = 5000;
constexpr int64_t kLingerMs = 30000;
constexpr int kDrainReadsPerWake = 4;

class LaneCore;

int64_t NowMs(uv_loop_t* loop) {
  return static_cast<int64_t>(uv_now(loop));
}

int64_t Ns(const uv_timespec_t& time) {
  return static_cast<int64_t>(time.tv_sec) * 1000000000 + static_cast<int64_t>(time.tv_nsec);
}

// One accepted connection, owned by the lane until it is closed or handed off.
struct LaneConnection {
  LaneCore* core = nullptr;
  UniqueFd fd;
  uv_poll_t poll;
  LaneConnection* prev = nullptr;
  LaneConnection* next = nullptr;
  std::string pending;  // bytes read and not consumed (a partial head, pipelined requests)
  // The answer being written, once the socket took only part of its head
  // and in-memory body (LaneCore::Flush): the rest in `out`, which goes from
  // `out_done`; then the row's file.
  size_t out_base = 0;  // the bytes of the answer sent before `out`
  uint16_t status = 0;  // the answer's status code (the access log's)
  std::string out;
  size_t out_done = 0;
  RowPtr row;
  int64_t file_start = 0;  // where the row's body begins in the file (a range's start)
  int64_t file_offset = 0;
  int64_t file_end = 0;
  bool writing = false;
  bool close_after = false;
  bool served = false;  // answered a request already (idle = keep-alive)
  bool handing_off = false;
  bool waits_writable = false;  // its poll handle watches for room, not requests
  // One request lent to Node's server (LaneCore::Lend): its answer comes
  // through write(id); nothing is read meanwhile.
  bool lent = false;
  bool writes_lent = false;     // `out` holds Node's bytes (Node logs that answer)
  bool lent_answering = false;  // Node began writing the lent request's answer
  bool peer_ended = false;      // the client's FIN came while Node answered
  // The request's body not read yet (done: none): while lent, read as it
  // comes and handed to Node (onBody) unless Node's twin is full
  // (body_paused); once Node's answer is done, read and dropped, as Node
  // drops a body it did not read.
  BodyFraming body;
  bool body_paused = false;

  bool BodyLeft() const { return !body.Done(); }
  bool file_short = false;  // a lent file ended before its range did
  // JavaScript awaits how the lent file range ends (onWritten or onGone by
  // id): while lent, and after, when Node's answer ended before the range
  // did and the lane sends the rest alone.
  bool file_owed = false;
  bool lingering = false;       // answered and shut for writing (LaneCore::Linger)
  bool unsent_limited = false;  // TCP_NOTSENT_LOWAT lowered (LimitUnsent), once
  UniqueFd lent_file;           // a lent answer's body file (sendFile(id, ...)): a dup
  uint32_t id = 0;              // while lent
  int64_t last_ms = 0;
  int64_t head_ms = 0;    // when the head in `pending` began to arrive
  int64_t linger_ms = 0;  // when it began to linger
  // What the access log says of the answer being written (LaneCore::LogAnswer).
  std::string log_target;
  uint64_t started_ns = 0;
  size_t body_start = 0;  // where the body begins in the answer's bytes
  uint8_t log_flags = 0;

  // The file bytes of the answer sent so far.
  int64_t FileSent() const { return file_offset - file_start; }
  // The same of a lent answer's file range under way (0 when there is none).
  int64_t LentFileSent() const { return lent_file.Get() >= 0 ? FileSent() : 0; }
};

// An answer to one of a read's requests, waiting to go with the others in
// one sendmsg (LaneCore::Gather, Flush): its head and, from memory, its body.
struct GatheredAnswer {
  RowPtr row;
  const char* request = nullptr;  // its head's first byte, in the bytes being processed
  const char* target = nullptr;   // its target's, for the access log
  size_t target_length = 0;
  uint64_t started_ns = 0;
  uint8_t log_flags = 0;
  bool body = false;  // the row's body goes (not a HEAD, not a 304)
  bool close_after = false;
};
// Up to 16 answers a sendmsg, 6 iovecs each: 96 of IOV_MAX's 1024.
constexpr int kGatherAnswers = 16;
constexpr int kIovecsPerAnswer = 6;

// One answer in the batch of access log records the lane hands JavaScript
// (bin/lib/serve/lane-log.js reads them), followed by its target's bytes.
struct LogRecord {
  double time_ms;      // wall clock when the answer ended
  double duration_ms;  // from its head parsed to its end
  double bytes;        // body bytes written
  uint16_t status;
  uint8_t flags;  // kLog* below
  uint8_t ended;  // kEnded* below
  uint32_t target_length;
};
static_assert(sizeof(LogRecord) == 32, "lane-log.js reads 32-byte records");
constexpr uint8_t kLogHead = 1;
constexpr int kLogCodingShift = 3;  // flags >> 3: the row's log_coding
constexpr uint8_t kLogZeroCopy = 2;
constexpr uint8_t kLogFromMemory = 4;
constexpr uint8_t kEndedComplete = 0;
constexpr uint8_t kEndedAborted = 1;
constexpr uint8_t kEndedShutdown = 2;

// What Node's server writes to a connection whose head took longer than
// headersTimeout, before it closes it (_http_server.js, requestTimeoutResponse).
constexpr char kRequestTimeout[] = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n";

bool TokenIs(const char* data, const HeadSpan& span, const char* word) {
  const size_t length = std::strlen(word);
  if (span.length != length) return false;
  for (size_t i = 0; i < length; i++) {
    char c = data[span.offset + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[i]) return false;
  }
  return true;
}

const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

class LaneCore {
 public:
  napi_env env = nullptr;
  uv_loop_t* loop = nullptr;
  napi_ref on_hand_off = nullptr;
  napi_ref on_log = nullptr;  // null: no access log (--quiet)
  std::string log;            // LogRecords not yet handed to JavaScript
  uv_check_t log_check;       // hands them over once per loop turn
  // Lending (optional: without on_lend every request the lane does not answer
  // hands its connection off): onLend(id, bytes, ends),
  // onBody(id, bytes), onWritten(id, fileBytes, fileShort), onGone(id, fileBytes, fileShort):
  // how much of a lent file range went, and whether the file ended before it.
  napi_ref on_lend = nullptr;
  napi_ref on_written = nullptr;
  napi_ref on_gone = nullptr;
  napi_ref on_body = nullptr;  // onBody(id, bytes): the lent request's body as it comes
  uint32_t next_lent_id = 0;
  std::unordered_map<uint32_t, LaneConnection*, std::hash<uint32_t>, std::equal_to<uint32_t>,
                     PlainAllocator<std::pair<const uint32_t, LaneConnection*>>>
      lent;
  napi_async_context async = nullptr;
  napi_async_cleanup_hook_handle hook = nullptr;
  UniqueFd listen_fd;
  uv_poll_t listen_poll;
  uv_timer_t timer;
  bool listen_poll_open = false;
  bool accepting = false;
  bool stopping = false;
  bool destroyed = false;
  bool env_closing = false;
  int open_handles = 0;  // handles libuv holds (their close callbacks not run)
  LaneConnection* first = nullptr;
  size_t connections = 0;
  size_t lingering = 0;  // of them, answered and closing (Linger)
  AnswerTable table;
  int64_t keep_alive_ms = 5000;
  int64_t idle_ms = 0;
  int64_t head_timeout_ms = 0;  // Node's headersTimeout
  std::string keep_alive_line;  // "Keep-Alive: timeout=5\r\n", or empty
  char read_buffer[kReadBytes];
  std::string key_scratch;  // each request's AnswerKey, its capacity kept
  // The answers gathered from the bytes Process() is going through; always
  // written (Flush) before it returns, and before any JavaScript is called.
  GatheredAnswer gathered[kGatherAnswers];
  int gathered_count = 0;
  InotifyQueue* inotify = nullptr;  // the loop's unread watch events, shared (pending_changes.h)
  time_t date_second = -1;
  std::string date_line;

  LaneCore() = default;
  LaneCore(const LaneCore&) = delete;
  LaneCore& operator=(const LaneCore&) = delete;
  ~LaneCore() {
    if (inotify != nullptr) ReleaseLoopQueue(loop);
  }

  bool Init(napi_env e, napi_value callback) {
    env = e;
    if (napi_get_uv_event_loop(env, &loop) != napi_ok) return false;
    inotify = AcquireLoopQueue(loop);
    if (inotify == nullptr) return false;
    if (napi_create_reference(env, callback, 1, &on_hand_off) != napi_ok) return false;
    napi_value name = nullptr;
    napi_create_string_utf8(env, "zcopy:lane", NAPI_AUTO_LENGTH, &name);
    if (napi_async_init(env, nullptr, name, &async) != napi_ok) return false;
    if (uv_check_init(loop, &log_check) != 0) return false;
    log_check.data = this;
    open_handles++;
    uv_unref(reinterpret_cast<uv_handle_t*>(&log_check));
    if (uv_timer_init(loop, &timer) != 0) return false;
    timer.data = this;
    open_handles++;
    uv_unref(reinterpret_cast<uv_handle_t*>(&timer));
    uv_timer_start(&timer, OnTimer, kSweepMs, kSweepMs);
    if (napi_add_async_cleanup_hook(env, OnEnvTeardown, this, &hook) != napi_ok) hook = nullptr;
    return true;
  }

  // → 0 or an errno, with *syscall the call that failed.
  int Listen(const std::string& address, int port, bool ipv6, int* bound_port, const char** syscall) {
    UniqueFd fd;
    int err = BindListening(address, port, ipv6, &fd, bound_port, syscall);
    if (err != 0) return err;
    return Poll(&fd, syscall);
  }

  // Accepts from a listening socket another process bound (a --workers
  // primary, which forked this one with it): every lane that adopts it
  // accepts from the one queue. → 0 or an errno, as Listen.
  int AdoptListening(int raw, int* bound_port, const char** syscall) {
    int err = 0;
    *syscall = "getsockopt";
    int listening = 0;
    socklen_t size = sizeof listening;
    if (::getsockopt(raw, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0) return errno;
    if (listening == 0) return EINVAL;
    // Whatever the process that started this one left set: the socket is
    // not for the processes this one starts (compression processes), and
    // the lane never blocks on it.
    *syscall = "fcntl";
    if (::fcntl(raw, F_SETFD, FD_CLOEXEC) != 0) return errno;
    const int flags = ::fcntl(raw, F_GETFL);
    if (flags < 0 || ::fcntl(raw, F_SETFL, flags | O_NONBLOCK) != 0) return errno;
    *syscall = "getsockname";
    sockaddr_storage storage{};
    socklen_t length = sizeof storage;
    if (::getsockname(raw, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return errno;
    if (storage.ss_family != AF_INET && storage.ss_family != AF_INET6) return EINVAL;
    *bound_port = PortOf(storage);
    UniqueFd fd(raw);
    err = Poll(&fd, syscall);
    if (err != 0) fd.Release();  // still the caller's
    return err;
  }

  static int PortOf(const sockaddr_storage& storage) {
    return ntohs(storage.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port
                                               : reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  }

  // A non-blocking, close-on-exec socket bound to address:port and listening
  // (SO_REUSEADDR, backlog 511), in *out. → 0 or an errno, as Listen.
  static int BindListening(const std::string& address, int port, bool ipv6, UniqueFd* out, int* bound_port,
                           const char** syscall) {
    *syscall = "socket";
    UniqueFd fd(::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.Valid()) return errno;
    int on = 1;
    ::setsockopt(fd.Get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_storage storage{};
    socklen_t length = 0;
    if (ipv6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(static_cast<uint16_t>(port));
      if (::inet_pton(AF_INET6, address.c_str(), &in6->sin6_addr) != 1) return EINVAL;
      length = sizeof *in6;
    } else {
      auto* in4 = reinterpret_cast<sockaddr_in*>(&storage);
      in4->sin_family = AF_INET;
      in4->sin_port = htons(static_cast<uint16_t>(port));
      if (::inet_pton(AF_INET, address.c_str(), &in4->sin_addr) != 1) return EINVAL;
      length = sizeof *in4;
    }
    *syscall = "bind";
    if (::bind(fd.Get(), reinterpret_cast<sockaddr*>(&storage), length) != 0) return errno;
    *syscall = "listen";
    if (::listen(fd.Get(), 511) != 0) return errno;
    length = sizeof storage;
    ::getsockname(fd.Get(), reinterpret_cast<sockaddr*>(&storage), &length);
    *bound_port = PortOf(storage);
    *out = std::move(fd);
    return 0;
  }

  // The lane accepts from *fd (listening) from now on, and owns it; on a
  // failure (→ its errno) *fd is left as it was.
  int Poll(UniqueFd* fd, const char** syscall) {
    *syscall = "uv_poll_init";
    int err = uv_poll_init(loop, &listen_poll, fd->Get());
    if (err != 0) return -err;
    listen_poll.data = this;
    open_handles++;
    listen_poll_open = true;
    listen_fd = std::move(*fd);
    accepting = true;
    uv_poll_start(&listen_poll, UV_READABLE, OnListenReadable);
    return 0;
  }

  void StopListening() {
    accepting = false;
    uv_unref(reinterpret_cast<uv_handle_t*>(&timer));  // no pause to hold the loop for
    if (!listen_poll_open) return;
    listen_poll_open = false;
    uv_poll_stop(&listen_poll);
    // Closed now, not in the close callback a loop turn later: a client that
    // connects once the stop began is refused, as by Node's server.close(),
    // not taken into the queue and reset (libuv allows it once polling stopped).
    listen_fd.Reset();
    uv_close(reinterpret_cast<uv_handle_t*>(&listen_poll), OnListenClosed);
  }

  static void OnListenClosed(uv_handle_t* handle) { static_cast<LaneCore*>(handle->data)->HandleClosed(); }

  static void OnListenReadable(uv_poll_t* handle, int status, int /*events*/) {
    auto* self = static_cast<LaneCore*>(handle->data);
    if (status < 0) return;
    self->AcceptSome();
  }

  void AcceptSome() {
    for (int i = 0; i < kAcceptsPerWake && accepting; i++) {
      int fd = ::accept4(listen_fd.Get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: wait a while rather than spin on a queue that
          // stays readable (as libuv and nginx do). The timer holds the loop
          // meanwhile, as the listener did: with no connection left, a loop
          // with only unreferenced handles would end the process.
          uv_poll_stop(&listen_poll);
          uv_ref(reinterpret_cast<uv_handle_t*>(&timer));
          uv_timer_start(&timer, OnTimer, kAcceptPauseMs, kSweepMs);
        }
        return;
      }
      Adopt(UniqueFd(fd));
    }
  }

  void Adopt(UniqueFd fd) {
    auto* conn = new (std::nothrow) LaneConnection();
    if (conn == nullptr) return;  // fd closes: the client sees a reset
    int on = 1;
    ::setsockopt(fd.Get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);  // as Node's server does
    if (uv_poll_init(loop, &conn->poll, fd.Get()) != 0) {
      delete conn;
      return;
    }
    open_handles++;
    conn->core = this;
    conn->fd = std::move(fd);
    conn->poll.data = conn;
    conn->last_ms = NowMs(loop);
    Link(conn);
    uv_poll_start(&conn->poll, UV_READABLE, OnConnectionEvent);
  }

  void Link(LaneConnection* conn) {
    conn->next = first;
    if (first != nullptr) first->prev = conn;
    first = conn;
    connections++;
  }

  void Unlink(LaneConnection* conn) {
    if (conn->prev != nullptr) {
      conn->prev->next = conn->next;
    } else {
      first = conn->next;
    }
    if (conn->next != nullptr) conn->next->prev = conn->prev;
    conn->prev = conn->next = nullptr;
    connections--;
  }

  static void OnConnectionEvent(uv_poll_t* handle, int status, int events) {
    auto* conn = static_cast<LaneConnection*>(handle->data);
    LaneCore* self = conn->core;
    if (status < 0) return self->Close(conn);
    if (conn->lingering) return self->Drain(conn);
    const bool body = conn->BodyLeft() && !(conn->lent && conn->body_paused);
    if (body && (events & UV_READABLE) != 0 && (events & UV_DISCONNECT) == 0) {
      self->ReadBody(conn);
      events &= ~UV_READABLE;
      if (events == 0 || uv_is_closing(reinterpret_cast<uv_handle_t*>(&conn->poll))) return;
    }
    if (conn->writing) {
      if ((events & UV_WRITABLE) != 0) self->OnWritable(conn);
      return;
    }
    // A lent request's client sent its FIN (or reset). Before Node began
    // to answer, the request is dropped, as Node's server (not half-open)
    // drops what it has not answered; once it began, its answer is written
    // whole (a reset fails the write), as Node's own sendfile of it would
    // be, rather than cut into a body shorter than its Content-Length.
    if (conn->lent) {
      if ((events & UV_DISCONNECT) == 0 && events != 0) return;  // a body's read, paused since
      if (!conn->lent_answering) return self->Close(conn);
      conn->peer_ended = true;
      uv_poll_stop(&conn->poll);
      return;
    }
    if ((events & UV_READABLE) == 0) return;
    if (conn->BodyLeft()) return self->ReadBody(conn);  // the rest of a body Node did not read
    self->ReadSome(conn);
  }

  // One read of the request body still to come: to Node while the request
  // is lent (onBody), else dropped; bytes past the body are the next
  // requests (pending). The client's end before the body's is the client
  // going away (Node hears it: onGone); a chunked body outside what
  // request_body.cc reads closes the connection (where it ends is not known).
  void ReadBody(LaneConnection* conn) {
    ssize_t n;
    do {
      n = ::read(conn->fd.Get(), read_buffer, conn->body.ReadSize(kReadBytes, kRequestReadBytes));
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) return Close(conn);
    conn->last_ms = NowMs(loop);
    const size_t got = static_cast<size_t>(n);
    const size_t body = conn->body.Take(read_buffer, got);
    if (conn->body.Failed()) return Close(conn);
    if (body < got) conn->pending.append(read_buffer + body, got - body);
    // At the body's end, an answer still waiting for room keeps the poll's
    // watch for it, and the requests behind wait for it (OnWritable).
    if (conn->lent) {
      if (!conn->BodyLeft()) {
        if (conn->waits_writable) {
          WaitWritable(conn);
        } else {
          WatchLent(conn);
        }
      }
      if (body > 0) CallBody(conn, read_buffer, body);
      return;
    }
    if (conn->BodyLeft()) return;
    if (conn->waits_writable) {
      WaitWritable(conn);
    } else {
      ReadOn(conn);
    }
  }

  void ReadSome(LaneConnection* conn) {
    for (;;) {
      ssize_t n = ::read(conn->fd.Get(), read_buffer, kRequestReadBytes);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        return Close(conn);
      }
      conn->last_ms = NowMs(loop);
      if (n == 0) {
        // End of the stream: Node answers a partial head (400), and closes an
        // idle connection as the lane does.
        if (!conn->pending.empty()) return HandOff(conn, nullptr, 0);
        return Close(conn);
      }
      bool more;
      if (conn->pending.empty()) {
        conn->head_ms = conn->last_ms;  // a head left partial by this read began now
        more = Process(conn, read_buffer, static_cast<size_t>(n));
      } else {
        conn->pending.append(read_buffer, static_cast<size_t>(n));
        std::string bytes;
        bytes.swap(conn->pending);
        more = Process(conn, bytes.data(), bytes.size());
      }
      // A short read took all there was: the poll (level-triggered) says
      // when more comes, with no read to find EAGAIN in between.
      if (!more || static_cast<size_t>(n) < kRequestReadBytes) return;
    }
  }

  // Parses and answers the requests in data[0, size). → whether to go on
  // reading; whatever is not consumed is kept in conn->pending. The answers
  // to a read's pipelined requests go out together, by one sendmsg (as nginx
  // writes a chain), up to one with a file body or one that closes.
  bool Process(LaneConnection* conn, const char* data, size_t size) {
    const char* const end = data + size;
    for (;;) {
      const size_t left = static_cast<size_t>(end - data);
      RequestHead head;
      HeadResult result = HeadResult::kIncomplete;
      bool answered = false;
      if (left > 0) {
        result = ParseRequestHead(data, left, &head);
        RowPtr row = result == HeadResult::kComplete ? Answerable(data, head) : nullptr;
        if (row != nullptr) {
          answered = true;
          const GatheredAnswer& answer = Gather(conn, std::move(row), data, head);
          data += head.length;
          const bool last =
              gathered_count == kGatherAnswers || answer.close_after || (answer.body && !answer.row->in_memory);
          if (!last) continue;
        }
      }
      // Anything else, and the end of the bytes, come once the answers
      // gathered before them are written.
      const char* const next = data;
      const Sent sent = Flush(conn, &data);
      if (sent == Sent::kClosed) return false;
      if (sent == Sent::kWaiting) {
        conn->pending.assign(data, static_cast<size_t>(end - data));
        return false;
      }
      // (A write the socket took in part moves `data` back to the first
      // request whose answer did not go: parsed again.)
      if (answered || data != next) continue;
      if (left == 0) break;
      if (result == HeadResult::kIncomplete && left < kMaxRequestHeadBytes) {
        conn->pending.assign(data, left);
        return true;
      }
      if (result != HeadResult::kComplete) return LendFramed(conn, data, left);
      // Node answers a request that closes the connection, and the bytes
      // after it (a 400, as llhttp reads them), as it does on its own.
      // Anything else is lent, ranges too: a lent answer's file range goes
      // by the lane's sendfile (sendFile), so the connection stays here.
      if (on_lend != nullptr && !(left > head.length && ClosesAfter(data, head))) {
        Lend(conn, data, head.length, left);
      } else {
        HandOff(conn, data, left);
      }
      return false;
    }
    conn->pending.clear();
    return true;
  }

  // A request outside the heads the lane answers (request_head.h), at the
  // start of data[0, size): lent to Node with its body when the lane can
  // frame it (request_frame.h), else the connection is handed off. → whether
  // to go on reading (a head not complete yet).
  bool LendFramed(LaneConnection* conn, const char* data, size_t size) {
    RequestFrame frame;
    const FrameResult framed = on_lend == nullptr ? FrameResult::kDefer : FrameRequest(data, size, &frame);
    if (framed == FrameResult::kIncomplete) {
      conn->pending.assign(data, size);
      return true;
    }
    if (framed == FrameResult::kDefer) {
      HandOff(conn, data, size);
      return false;
    }
    // The body: as much of it as was read with the head (all of it, or all
    // that was read); a chunked body outside what request_body.cc reads is
    // Node's to read, as any head the framing defers.
    BodyFraming body;
    if (frame.chunked) {
      body.ExpectChunked();
    } else {
      body.ExpectLength(frame.body_length);
    }
    const size_t whole = frame.head_length + body.Take(data + frame.head_length, size - frame.head_length);
    // As below: a request that closes, with bytes after it, is Node's.
    if (body.Failed() || (size > whole && frame.closes)) {
      HandOff(conn, data, size);
      return false;
    }
    conn->body = body;  // what is left of it is read as it comes (ReadBody)
    conn->body_paused = false;
    Lend(conn, data, whole, size);
    return false;
  }

  // Room in the socket for the answer waiting for it; then the pipelined
  // requests read with it.
  void OnWritable(LaneConnection* conn) {
    const Sent sent = Write(conn);
    if (sent == Sent::kWaiting) return;
    if (sent == Sent::kClosed) {
      // Written whole, then shut (the answer closes the connection): a file
      // range owed is heard of now. Closed otherwise: onGone says it.
      if (conn->lingering && conn->file_owed) Written(conn);
      return;
    }
    if (conn->lent) return Written(conn);
    if (conn->file_owed) {
      // Node's answer ended before its file range did; the lane sent the rest.
      Written(conn);
      if (uv_is_closing(reinterpret_cast<uv_handle_t*>(&conn->poll))) return;  // (closed by the callback)
    }
    if (conn->BodyLeft()) return;  // the rest of a body Node did not read: dropped first
    if (conn->pending.empty()) return;
    std::string bytes;
    bytes.swap(conn->pending);
    Process(conn, bytes.data(), bytes.size());
  }

  // onWritten(id): what a lent answer had waiting for room went, with any
  // file range owed (also once Node's answer ended before the range did).
  void Written(LaneConnection* conn) {
    conn->file_owed = false;
    CallLent(on_written, conn, nullptr, 0);
  }

  // A lent connection's events: its client going away (unless it went
  // already) and the request's body while Node takes it.
  void WatchLent(LaneConnection* conn) {
    const bool body = conn->BodyLeft() && !conn->body_paused;
    const int events = (conn->peer_ended ? 0 : UV_DISCONNECT) | (body ? UV_READABLE : 0);
    if (events == 0) {
      uv_poll_stop(&conn->poll);
    } else {
      uv_poll_start(&conn->poll, events, OnConnectionEvent);
    }
  }

  // The connection is the lane's again (Node's answer written): the rest of
  // a body Node did not read is dropped, then the requests behind are read.
  void ReadOn(LaneConnection* conn) {
    uv_poll_start(&conn->poll, UV_READABLE, OnConnectionEvent);
    if (conn->BodyLeft() || conn->pending.empty()) return;
    std::string bytes;
    bytes.swap(conn->pending);
    Process(conn, bytes.data(), bytes.size());
  }

  // Node closes after the answer to HTTP/1.0 (unless keep-alive was asked) and
  // to `Connection: close`.
  static bool ClosesAfter(const char* data, const RequestHead& head) {
    if (!head.connection.present) return head.version_minor == 0;
    if (TokenIs(data, head.connection, "close")) return true;
    return head.version_minor == 0 && !TokenIs(data, head.connection, "keep-alive");
  }

  // The row that answers this request, or null (then JavaScript answers it).
  RowPtr Answerable(const char* data, const RequestHead& head) {
    if (head.connection.present && !TokenIs(data, head.connection, "close") &&
        !TokenIs(data, head.connection, "keep-alive")) {
      return nullptr;
    }
    // A condition with Cache-Control (no-cache fails it) is JavaScript's to
    // weigh: the key does not hold Cache-Control.
    if (head.cache_control && (head.if_none_match.present || head.if_modified_since.present)) {
      return nullptr;
    }
    AnswerKey(&key_scratch, head.method, data, head.target, head.host, head.accept_encoding, head.if_none_match,
              head.if_modified_since, head.range);
    RowPtr row = table.Find(key_scratch);
    if (row == nullptr) return nullptr;
    // A change the watches saw and JavaScript has not read yet may drop this
    // row: JavaScript answers (and reads the events first).
    if (inotify->Queued(loop) != 0) return nullptr;
    if (!row->has_file && !row->has_source) return row;
    const int64_t now = NowMs(loop);
    if (now - row->checked_ms < kRevalidateMs) return row;
    if ((row->has_file && !Unchanged(row->file, row->stat)) ||
        (row->has_source && !Unchanged(row->source, row->source_stat))) {
      table.Forget(row->id);  // JavaScript answers, and registers the new answer
      return nullptr;
    }
    row->checked_ms = now;
    return row;
  }

  static bool Unchanged(const UniqueFd& fd, const RowStat& stat) {
    RowStat now_stat;
    return StatOf(fd.Get(), &now_stat) == 0 && now_stat == stat;
  }

  // fstat through libuv, not glibc's fstat (file_stat.h says why): 0, or
  // the errno value (positive) of the failure.
  static int StatOf(int fd, RowStat* out) {
    uv_fs_t req;
    const int rc = uv_fs_fstat(nullptr, &req, fd, nullptr);
    if (rc == 0) {
      out->dev = req.statbuf.st_dev;
      out->ino = req.statbuf.st_ino;
      out->size = static_cast<int64_t>(req.statbuf.st_size);
      out->mtime_ns = Ns(req.statbuf.st_mtim);
      out->ctime_ns = Ns(req.statbuf.st_ctim);
    }
    uv_fs_req_cleanup(&req);
    return rc < 0 ? -rc : 0;
  }

  const std::string& DateLine() {
    const time_t now = ::time(nullptr);
    if (now == date_second) return date_line;
    date_second = now;
    struct tm tm {};
    gmtime_r(&now, &tm);
    char text[64];
    std::snprintf(text, sizeof text, "Date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n", kDays[tm.tm_wday], tm.tm_mday,
                  kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    date_line = text;
    return date_line;
  }

  // Adds the answer of `row` to the request at `request` to those waiting
  // for Flush().
  const GatheredAnswer& Gather(LaneConnection* conn, RowPtr row, const char* request, const RequestHead& head) {
    row->hit = true;
    const bool head_only = head.method == RequestMethod::kHead;
    GatheredAnswer& answer = gathered[gathered_count++];
    answer.request = request;
    answer.body = !head_only && !row->no_body;
    // Without a Content-Length (a 304), Node keeps no HTTP/1.0 connection.
    answer.close_after = ClosesAfter(request, head) || stopping || (row->no_body && head.version_minor == 0);
    answer.log_flags = head_only ? kLogHead : !answer.body ? 0 : row->in_memory ? kLogFromMemory : kLogZeroCopy;
    answer.log_flags = static_cast<uint8_t>(answer.log_flags | row->log_coding << kLogCodingShift);
    if (on_log != nullptr) {
      answer.target = request + head.target.offset;
      answer.target_length = head.target.length;
      answer.started_ns = uv_hrtime();
    }
    answer.row = std::move(row);
    conn->served = true;
    return answer;
  }

  enum class Sent { kDone, kWaiting, kClosed };

  // Writes the gathered answers, each head with Date, Connection and
  // Keep-Alive as Node writes them and a body in memory, by one sendmsg from
  // the rows' own bytes and the lane's. The answers the socket took whole
  // are done; the first it took only part of (or whose file is still to go)
  // becomes the connection's answer, its rest copied to `out`, and the
  // requests after it are parsed again once it is written: *resume moves
  // back to the first of them. → kDone, kWaiting (for POLLOUT), or kClosed
  // (an error, or the last answer closes the connection).
  Sent Flush(LaneConnection* conn, const char** resume) {
    if (gathered_count == 0) return Sent::kDone;
    static constexpr char kClose[] = "Connection: close\r\n";
    static constexpr char kKeepAlive[] = "Connection: keep-alive\r\n";
    const std::string& date = DateLine();
    iovec iov[kGatherAnswers * kIovecsPerAnswer];
    int first_iov[kGatherAnswers + 1];
    size_t ends[kGatherAnswers];         // where each answer's bytes end
    size_t body_starts[kGatherAnswers];  // and where its body begins
    int count = 0;
    size_t total = 0;
    const auto add = [&](const char* bytes, size_t size) {
      if (size == 0) return;
      iov[count].iov_base = const_cast<char*>(bytes);
      iov[count].iov_len = size;
      count++;
      total += size;
    };
    for (int i = 0; i < gathered_count; i++) {
      const GatheredAnswer& answer = gathered[i];
      first_iov[i] = count;
      add(answer.row->head.data(), answer.row->head.size());
      add(date.data(), date.size());
      if (answer.close_after) {
        add(kClose, sizeof kClose - 1);
      } else {
        add(kKeepAlive, sizeof kKeepAlive - 1);
        add(keep_alive_line.data(), keep_alive_line.size());
      }
      add("\r\n", 2);
      body_starts[i] = total;
      if (answer.body && answer.row->in_memory) add(answer.row->body.data(), answer.row->body.size());
      ends[i] = total;
    }
    first_iov[gathered_count] = count;
    const GatheredAnswer& last = gathered[gathered_count - 1];
    const bool file_follows = last.body && !last.row->in_memory;
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = static_cast<decltype(message.msg_iovlen)>(count);
    ssize_t n;
    do {
      n = ::sendmsg(conn->fd.Get(), &message, file_follows ? MSG_NOSIGNAL | MSG_MORE : MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    const bool failed = n < 0 && errno != EAGAIN && errno != EWOULDBLOCK;
    const size_t sent = n > 0 ? static_cast<size_t>(n) : 0;
    if (sent > 0) conn->last_ms = NowMs(loop);  // progress: the send timeout starts again
    int i = 0;
    size_t start = 0;  // where answer i's bytes begin
    for (; i < gathered_count && !failed && ends[i] <= sent && !(i == gathered_count - 1 && file_follows); i++) {
      const GatheredAnswer& answer = gathered[i];
      Log(answer.target, answer.target_length, answer.started_ns, static_cast<double>(ends[i] - body_starts[i]),
          StatusOf(answer.row->head), answer.log_flags, kEndedComplete);
      start = ends[i];
    }
    if (i == gathered_count) {
      const bool close_after = last.close_after;
      ReleaseGathered();
      conn->last_ms = NowMs(loop);
      conn->head_ms = conn->last_ms;  // a head read behind the answers is timed from now
      if (!close_after) return Sent::kDone;
      Linger(conn);
      return Sent::kClosed;
    }
    // Answer i becomes the connection's, what the socket did not take of it
    // in `out` (a copy, only when the socket is full).
    const GatheredAnswer& answer = gathered[i];
    conn->out.clear();
    size_t skip = sent > start ? sent - start : 0;
    for (int v = first_iov[i]; v < first_iov[i + 1]; v++) {
      const size_t length = iov[v].iov_len;
      if (skip < length) conn->out.append(static_cast<const char*>(iov[v].iov_base) + skip, length - skip);
      skip = skip < length ? 0 : skip - length;
    }
    conn->out_base = sent > start ? sent - start : 0;
    conn->out_done = 0;
    conn->body_start = body_starts[i] - start;
    conn->status = StatusOf(answer.row->head);
    conn->log_flags = answer.log_flags;
    if (on_log != nullptr) conn->log_target.assign(answer.target, answer.target_length);
    conn->started_ns = answer.started_ns;
    conn->row = answer.body && !answer.row->in_memory ? answer.row : nullptr;
    conn->file_start = conn->file_offset = answer.row->file_offset;
    conn->file_end = answer.row->file_offset + answer.row->file_size;
    conn->close_after = answer.close_after;
    conn->writing = true;
    if (i + 1 < gathered_count) *resume = gathered[i + 1].request;
    ReleaseGathered();
    if (failed) {
      Close(conn);
      return Sent::kClosed;
    }
    return Write(conn);
  }

  void ReleaseGathered() {
    for (int i = 0; i < gathered_count; i++) gathered[i].row = nullptr;
    gathered_count = 0;
  }

  // Writes what is left of the answer: kDone, kWaiting (for POLLOUT), or
  // kClosed (an error, or the answer closes the connection).
  Sent Write(LaneConnection* conn) {
    while (conn->out_done < conn->out.size()) {
      ssize_t n = ::send(conn->fd.Get(), conn->out.data() + conn->out_done, conn->out.size() - conn->out_done,
                         conn->row != nullptr ? MSG_NOSIGNAL | MSG_MORE : MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return WaitWritable(conn);
        Close(conn);
        return Sent::kClosed;
      }
      conn->out_done += static_cast<size_t>(n);
      conn->last_ms = NowMs(loop);  // progress: the send timeout starts again
    }
    const int file = conn->row != nullptr ? conn->row->file.Get() : conn->lent_file.Get();
    // A long body queues at most kUnsentLimit unsent, as the engine's
    // transfers do (tuning.h says why: a loopback client otherwise spends its
    // time sending the server's backlog).
    if (file >= 0 && !conn->unsent_limited && conn->file_end - conn->file_offset > kUnsentLimit) {
      LimitUnsent(conn->fd.Get());
      conn->unsent_limited = true;
    }
    while (file >= 0 && conn->file_offset < conn->file_end) {
      off_t offset = conn->file_offset;
      ssize_t n = ::sendfile(conn->fd.Get(), file, &offset, static_cast<size_t>(conn->file_end - conn->file_offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return WaitWritable(conn);
        Close(conn);
        return Sent::kClosed;
      }
      if (n == 0) {
        // The file got shorter since its last check: the promised length
        // cannot be kept, so the connection is cut (as the JS path does).
        // A row is forgotten here; JavaScript hears of a lent file's (onGone)
        // and drops its cache entry.
        if (conn->row != nullptr) table.Forget(conn->row->id);
        conn->file_short = conn->row == nullptr;
        Close(conn);
        return Sent::kClosed;
      }
      conn->file_offset += n;
      conn->last_ms = NowMs(loop);
    }
    if (!conn->writes_lent) LogAnswer(conn, kEndedComplete);
    conn->writes_lent = false;
    conn->writing = false;
    conn->row = nullptr;
    conn->lent_file.Reset();
    std::string().swap(conn->out);  // its memory too (shrink_to_fit needs a newer libstdc++)
    conn->last_ms = NowMs(loop);
    conn->head_ms = conn->last_ms;  // a head read behind the answer is timed from now
    if (conn->close_after) {
      Linger(conn);
      return Sent::kClosed;
    }
    if (conn->waits_writable) {  // (an epoll_ctl only when the events change)
      conn->waits_writable = false;
      if (conn->lent) {
        WatchLent(conn);  // (Lend says why)
      } else {
        uv_poll_start(&conn->poll, UV_READABLE, OnConnectionEvent);
      }
    }
    return Sent::kDone;
  }

  Sent WaitWritable(LaneConnection* conn) {
    conn->waits_writable = true;
    // A lent request's body keeps coming meanwhile (Node may answer while it
    // reads: an echo would wait on a client that waits on it).
    const bool body = conn->lent && conn->BodyLeft() && !conn->body_paused;
    uv_poll_start(&conn->poll, UV_WRITABLE | (body ? UV_READABLE : 0), OnConnectionEvent);
    return Sent::kWaiting;
  }

  // The answer is written and the connection closes: the write side now
  // (the client reads the answer and its end), the descriptor once the
  // client closes too or the linger bounds pass (kLingerMs above). No more
  // requests are read; Sweep() times it out, Stop() and Destroy() close it.
  void Linger(LaneConnection* conn) {
    ::shutdown(conn->fd.Get(), SHUT_WR);
    conn->lingering = true;
    lingering++;
    conn->writing = false;
    std::string().swap(conn->pending);
    conn->linger_ms = conn->last_ms = NowMs(loop);
    conn->waits_writable = false;
    uv_poll_start(&conn->poll, UV_READABLE, OnConnectionEvent);
    Drain(conn);
  }

  // Reads and drops what a lingering connection's client sends; closes it at
  // the client's end (or an error). A few reads a wake-up at most: a client
  // that keeps the socket full cannot hold the loop (the level-triggered
  // poll comes back, and kLingerMs ends it).
  void Drain(LaneConnection* conn) {
    for (int reads = 0; reads < kDrainReadsPerWake; reads++) {
      ssize_t n = ::read(conn->fd.Get(), read_buffer, kReadBytes);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        return Close(conn);
      }
      if (n == 0) return Close(conn);
      conn->last_ms = NowMs(loop);
      if (static_cast<size_t>(n) < kReadBytes) return;
    }
  }

  void Close(LaneConnection* conn) {
    if (conn->writing && !conn->writes_lent) LogAnswer(conn, stopping || destroyed ? kEndedShutdown : kEndedAborted);
    if (conn->lent) lent.erase(conn->id);  // onGone(id) from the close callback
    if (conn->lingering) lingering--;
    Unlink(conn);
    uv_poll_stop(&conn->poll);
    uv_close(reinterpret_cast<uv_handle_t*>(&conn->poll), OnConnectionClosed);
  }

  // The poll handle is closed first (libuv allows one per descriptor); the
  // descriptor goes to JavaScript from its close callback, once libuv has let go.
  void HandOff(LaneConnection* conn, const char* data, size_t size) {
    if (data != nullptr) conn->pending.assign(data, size);
    conn->handing_off = true;
    Close(conn);
  }

  static void OnConnectionClosed(uv_handle_t* handle) {
    auto* conn = static_cast<LaneConnection*>(handle->data);
    LaneCore* self = conn->core;
    if (conn->handing_off && !self->env_closing && !self->destroyed) self->CallHandOff(conn);
    if ((conn->lent || conn->file_owed) && !self->env_closing) self->CallLent(self->on_gone, conn, nullptr, 0);
    delete conn;  // closes the descriptor unless JavaScript took it
    self->HandleClosed();
  }

  // Calls `callback` from the loop as Node's own callbacks are called; an
  // exception it throws is the process's uncaught exception, as theirs.
  void MakeCallback(napi_value resource, napi_value callback, size_t argc, napi_value* argv) {
    napi_value result = nullptr;
    if (napi_make_callback(env, async, resource, callback, argc, argv, &result) == napi_ok) return;
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (!pending) return;
    napi_value error = nullptr;
    napi_get_and_clear_last_exception(env, &error);
    napi_fatal_exception(env, error);
  }

  void CallHandOff(LaneConnection* conn) {
    napi_handle_scope scope = nullptr;
    if (napi_open_handle_scope(env, &scope) != napi_ok) return;
    napi_value callback = nullptr;
    napi_value resource = nullptr;
    napi_value argv[2] = {nullptr, nullptr};
    void* copy = nullptr;
    if (napi_get_reference_value(env, on_hand_off, &callback) == napi_ok && callback != nullptr &&
        napi_create_object(env, &resource) == napi_ok && napi_create_int32(env, conn->fd.Get(), &argv[0]) == napi_ok &&
        napi_create_buffer_copy(env, conn->pending.size(), conn->pending.data(), &copy, &argv[1]) == napi_ok) {
      conn->fd.Release();  // JavaScript owns it from here, even if the callback throws
      MakeCallback(resource, callback, 2, argv);
    }
    napi_close_handle_scope(env, scope);
  }

  // A request the lane parsed whole (data[0, length), no body) but cannot
  // answer goes to Node's server alone, through a twin socket
  // (bin/lib/serve/lane-twin.js); the connection stays here. Nothing more is
  // read until Node's answer is written (write) and done (Resume): one
  // request at a time, as nginx, and the lent answer before any later one.
  void Lend(LaneConnection* conn, const char* data, size_t length, size_t size) {
    conn->pending.assign(data + length, size - length);
    if (++next_lent_id == 0) next_lent_id = 1;
    conn->id = next_lent_id;
    conn->lent = true;
    conn->lent_answering = false;
    conn->peer_ended = false;
    lent[conn->id] = conn;
    conn->last_ms = NowMs(loop);
    // Reads wait (but for the request's body); a client that goes away (FIN
    // or reset) is seen at once, so that Node stops answering it, as on a
    // connection of its own.
    WatchLent(conn);
    CallLent(on_lend, conn, data, length);
  }

  LaneConnection* LentConnection(uint32_t id) {
    auto found = lent.find(id);
    return found == lent.end() ? nullptr : found->second;
  }

  // Bytes of the lent request's answer, in order: → 0 when the kernel took
  // them all, 1 when the rest waits for room (onWritten(id) then), -1 when
  // the connection is gone.
  int LentWrite(LaneConnection* conn, const char* data, size_t size) {
    if (size == 0) return 0;  // (Node's end() of an answer whose body went by sendFile)
    // Bytes written while a file range is under way would land inside it:
    // the framing is lost, so the connection is (as a socket's would be).
    if (conn->lent_file.Get() >= 0) {
      Close(conn);
      return -1;
    }
    conn->lent_answering = true;
    if (conn->writing) {  // (the twin writes once the last write is done)
      conn->out.append(data, size);
      return 1;
    }
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::send(conn->fd.Get(), data + done, size - done, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        Close(conn);
        return -1;
      }
      done += static_cast<size_t>(n);
    }
    conn->last_ms = NowMs(loop);
    if (done == size) return 0;
    conn->out.assign(data + done, size - done);
    conn->out_done = 0;
    conn->row = nullptr;
    conn->writing = true;
    conn->writes_lent = true;
    WaitWritable(conn);
    return 1;
  }

  // Bytes [offset, offset + length) of `file` as the lent request's body, by
  // sendfile behind the bytes already queued: → 0 sent, 1 then onWritten(id)
  // once the kernel took all of it, or onGone(id, fileBytes, fileShort) if
  // the connection closes first (-1 from SendFile: no such connection any
  // more). Either comes even if Node's answer ends before (finish(id)): the
  // lane sends the rest alone, so that Node lets go of the request at once
  // (lib/lane/twin.js). The lane sends from its own dup, so the caller's
  // descriptor may close whenever it likes.
  int LentSendFile(LaneConnection* conn, int file, int64_t offset, int64_t length) {
    UniqueFd dup(::fcntl(file, F_DUPFD_CLOEXEC, 0));
    if (dup.Get() < 0) {
      Close(conn);
      return 1;  // onGone(id, 0) settles it
    }
    conn->lent_answering = true;
    conn->lent_file = std::move(dup);
    conn->file_start = conn->file_offset = offset;
    conn->file_end = offset + length;
    conn->last_ms = NowMs(loop);
    if (conn->writing) {  // Write() sends it after the queued bytes
      conn->file_owed = true;
      return 1;
    }
    conn->out.clear();
    conn->out_done = 0;
    conn->row = nullptr;
    conn->writing = true;
    conn->writes_lent = true;
    // Closed in the middle (the client gone): 1 as well, since onGone(id,
    // fileBytes), from the close callback, says how much of the range went.
    if (Write(conn) == Sent::kDone) return 0;
    conn->file_owed = true;
    return 1;
  }

  // Node's answer to the lent request is done: the connection closes once it
  // is written (Node ended its twin), or the lane reads the next request.
  void LentDone(LaneConnection* conn, bool close) {
    lent.erase(conn->id);
    conn->lent = false;
    conn->served = true;
    conn->last_ms = NowMs(loop);
    conn->head_ms = conn->last_ms;  // a head read behind the lent request is timed from now
    if (close || stopping) {
      conn->close_after = true;
      if (conn->writing) return;  // Write() closes it
      return Linger(conn);
    }
    if (conn->writing) return;  // OnWritable() reads on once it is written
    ReadOn(conn);
  }

  // One end of a connection (getpeername or getsockname): its address as
  // text, its port and family ("IPv4", "IPv6"; "" and 0 when unknown).
  struct EndPoint {
    char address[INET6_ADDRSTRLEN] = "";
    int port = 0;
    const char* family = "";
  };
  static EndPoint EndOf(int fd, int (*get)(int, sockaddr*, socklen_t*)) {
    EndPoint end;
    sockaddr_storage storage{};
    socklen_t length = sizeof storage;
    if (get(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return end;
    if (storage.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage);
      ::inet_ntop(AF_INET6, &in6->sin6_addr, end.address, sizeof end.address);
      end.port = ntohs(in6->sin6_port);
      end.family = "IPv6";
    } else if (storage.ss_family == AF_INET) {
      const auto* in4 = reinterpret_cast<const sockaddr_in*>(&storage);
      ::inet_ntop(AF_INET, &in4->sin_addr, end.address, sizeof end.address);
      end.port = ntohs(in4->sin_port);
      end.family = "IPv4";
    }
    return end;
  }

  // Sets ends.<prefix>Address, <prefix>Port and <prefix>Family from `end`.
  bool SetEnd(napi_value ends, const EndPoint& end, const char* address, const char* port, const char* family) {
    napi_value value = nullptr;
    return napi_create_string_latin1(env, end.address, NAPI_AUTO_LENGTH, &value) == napi_ok &&
           napi_set_named_property(env, ends, address, value) == napi_ok &&
           napi_create_int32(env, end.port, &value) == napi_ok &&
           napi_set_named_property(env, ends, port, value) == napi_ok &&
           napi_create_string_latin1(env, end.family, NAPI_AUTO_LENGTH, &value) == napi_ok &&
           napi_set_named_property(env, ends, family, value) == napi_ok;
  }

  // callback(id) or, with data, callback(id, bytes, ends): both ends of the
  // connection for the twin ({ remoteAddress, remotePort, remoteFamily,
  // localAddress, localPort, localFamily }: the access log's, and what an app
  // reads of req.socket).
  void CallLent(napi_ref ref, LaneConnection* conn, const char* data, size_t size) {
    napi_handle_scope scope = nullptr;
    if (ref == nullptr || napi_open_handle_scope(env, &scope) != napi_ok) return;
    napi_value callback = nullptr;
    napi_value resource = nullptr;
    napi_value argv[3] = {nullptr, nullptr, nullptr};
    size_t argc = 1;
    bool ok = napi_get_reference_value(env, ref, &callback) == napi_ok && callback != nullptr &&
              napi_create_object(env, &resource) == napi_ok && napi_create_uint32(env, conn->id, &argv[0]) == napi_ok;
    if (ok && data != nullptr) {
      argc = 3;
      void* copy = nullptr;
      ok = napi_create_buffer_copy(env, size, data, &copy, &argv[1]) == napi_ok &&
           napi_create_object(env, &argv[2]) == napi_ok &&
           SetEnd(argv[2], EndOf(conn->fd.Get(), ::getpeername), "remoteAddress", "remotePort", "remoteFamily") &&
           SetEnd(argv[2], EndOf(conn->fd.Get(), ::getsockname), "localAddress", "localPort", "localFamily");
    }
    if (ok && data == nullptr) {
      // onWritten and onGone: how much of a lent file's range went (what a
      // cut answer reports), and whether the file ended before the range.
      argc = 3;
      ok = napi_create_double(env, static_cast<double>(conn->LentFileSent()), &argv[1]) == napi_ok &&
           napi_get_boolean(env, conn->file_short, &argv[2]) == napi_ok;
    }
    if (ok) {
      MakeCallback(resource, callback, argc, argv);
    }
    napi_close_handle_scope(env, scope);
  }

  // onBody(id, bytes): bytes of the lent request's body, copied.
  void CallBody(LaneConnection* conn, const char* data, size_t size) {
    napi_handle_scope scope = nullptr;
    if (on_body == nullptr || napi_open_handle_scope(env, &scope) != napi_ok) return;
    napi_value callback = nullptr;
    napi_value resource = nullptr;
    napi_value argv[2] = {nullptr, nullptr};
    void* copy = nullptr;
    if (napi_get_reference_value(env, on_body, &callback) == napi_ok && callback != nullptr &&
        napi_create_object(env, &resource) == napi_ok && napi_create_uint32(env, conn->id, &argv[0]) == napi_ok &&
        napi_create_buffer_copy(env, size, data, &copy, &argv[1]) == napi_ok) {
      MakeCallback(resource, callback, 2, argv);
    }
    napi_close_handle_scope(env, scope);
  }

  static void OnTimer(uv_timer_t* handle) {
    auto* self = static_cast<LaneCore*>(handle->data);
    uv_unref(reinterpret_cast<uv_handle_t*>(handle));  // a pause's hold, if any: over
    if (self->accepting && self->listen_poll_open) {
      uv_poll_start(&self->listen_poll, UV_READABLE, OnListenReadable);
    }
    self->Sweep();
  }

  // Idle keep-alive connections close after keepAliveTimeout, connections
  // that never sent a whole request after --timeout (as Node's server does).
  void Sweep() {
    const int64_t now = NowMs(loop);
    for (LaneConnection* conn = first; conn != nullptr;) {
      LaneConnection* next = conn->next;
      if (conn->lingering) {
        if (now - conn->last_ms >= kLingerQuietMs || now - conn->linger_ms >= kLingerMs) Close(conn);
      } else if (conn->lent || conn->writing) {
        // Node's answer, or the lane's, without progress for --timeout (a
        // client reading nothing): closed, as Node's socket timeout does.
        if (idle_ms > 0 && now - conn->last_ms >= idle_ms) Close(conn);
      } else {
        const int64_t limit = conn->served && conn->pending.empty() ? keep_alive_ms : idle_ms;
        if (limit > 0 && now - conn->last_ms >= limit) {
          Close(conn);  // silent, as Node's server.timeout
        } else if (!conn->pending.empty() && head_timeout_ms > 0 && now - conn->head_ms >= head_timeout_ms) {
          TimeOutHead(conn);
        }
      }
      conn = next;
    }
  }

  // A head still arriving after headersTimeout: Node's 408, then the close
  // (Node finds it at its next check, every 30 s; the lane at its next sweep).
  void TimeOutHead(LaneConnection* conn) {
    ::send(conn->fd.Get(), kRequestTimeout, sizeof kRequestTimeout - 1, MSG_NOSIGNAL);
    Linger(conn);
  }

  // The access log's record of the answer on `conn`, ended (complete, or cut
  // with what was written so far).
  void LogAnswer(LaneConnection* conn, uint8_t ended) {
    const size_t sent = conn->out_base + conn->out_done;
    const size_t from_memory = sent > conn->body_start ? sent - conn->body_start : 0;
    Log(conn->log_target.data(), conn->log_target.size(), conn->started_ns,
        static_cast<double>(from_memory) + static_cast<double>(conn->FileSent()), conn->status, conn->log_flags, ended);
  }

  // An access log record; JavaScript gets them once per loop turn.
  void Log(const char* target, size_t target_length, uint64_t started_ns, double bytes, uint16_t status, uint8_t flags,
           uint8_t ended) {
    if (on_log == nullptr) return;
    uv_timeval64_t now{};
    uv_gettimeofday(&now);
    LogRecord record{};
    record.time_ms = static_cast<double>(now.tv_sec) * 1000 + static_cast<double>(now.tv_usec) / 1000;
    record.duration_ms = static_cast<double>(uv_hrtime() - started_ns) / 1e6;
    record.bytes = bytes;
    record.status = status;
    record.flags = flags;
    record.ended = ended;
    record.target_length = static_cast<uint32_t>(target_length);
    if (log.empty() && !destroyed) uv_check_start(&log_check, OnLogCheck);
    log.append(reinterpret_cast<const char*>(&record), sizeof record);
    log.append(target, target_length);
  }

  // The status code of a status line "HTTP/1.1 200 OK".
  static uint16_t StatusOf(const std::string& head) {
    if (head.size() < 12) return 0;
    return static_cast<uint16_t>((head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0'));
  }

  static void OnLogCheck(uv_check_t* handle) {
    uv_check_stop(handle);
    static_cast<LaneCore*>(handle->data)->FlushLog();
  }

  // onLog(records): the records written since the last call, as a Buffer.
  // Never from a finalizer or the environment's teardown.
  void FlushLog() {
    if (log.empty() || on_log == nullptr || env_closing) return;
    std::string records;
    records.swap(log);
    napi_handle_scope scope = nullptr;
    if (napi_open_handle_scope(env, &scope) != napi_ok) return;
    napi_value callback = nullptr;
    napi_value resource = nullptr;
    napi_value argv[1] = {nullptr};
    void* copy = nullptr;
    if (napi_get_reference_value(env, on_log, &callback) == napi_ok && callback != nullptr &&
        napi_create_object(env, &resource) == napi_ok &&
        napi_create_buffer_copy(env, records.size(), records.data(), &copy, &argv[0]) == napi_ok) {
      MakeCallback(resource, callback, 1, argv);
    }
    napi_close_handle_scope(env, scope);
  }

  // Graceful stop: no more connections; those writing an answer close once it
  // is written, the others now (shutdown.js closes Node's idle ones alike).
  void Stop() {
    stopping = true;
    StopListening();
    for (LaneConnection* conn = first; conn != nullptr;) {
      LaneConnection* next = conn->next;
      if (conn->lent) {
        // Node's answer in flight: the connection closes once it is done.
      } else if (conn->writing) {
        conn->close_after = true;
      } else {
        Close(conn);  // idle, or a head not whole yet: as Node's drain does
      }
      conn = next;
    }
  }

  void Destroy() {
    if (destroyed) return;
    destroyed = true;
    StopListening();
    while (first != nullptr) Close(first);
    table.Clear();
    uv_timer_stop(&timer);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer), OnTimerClosed);
    uv_check_stop(&log_check);
    uv_close(reinterpret_cast<uv_handle_t*>(&log_check), OnTimerClosed);
  }

  static void OnTimerClosed(uv_handle_t* handle) { static_cast<LaneCore*>(handle->data)->HandleClosed(); }

  void HandleClosed() {
    open_handles--;
    if (open_handles == 0 && destroyed) Free();
  }

  bool wrapper_gone = false;

  // Once libuv holds none of its handles, the environment's teardown may go
  // on; the memory goes once the JS object is gone too.
  void Free() {
    if (hook != nullptr) napi_remove_async_cleanup_hook(hook);
    hook = nullptr;
    if (!wrapper_gone) return;
    if (!env_closing) {
      if (on_hand_off != nullptr) napi_delete_reference(env, on_hand_off);
      if (on_log != nullptr) napi_delete_reference(env, on_log);
      for (napi_ref ref : {on_lend, on_written, on_gone, on_body}) {
        if (ref != nullptr) napi_delete_reference(env, ref);
      }
      if (async != nullptr) napi_async_destroy(env, async);
    }
    delete this;
  }

  static void OnEnvTeardown(napi_async_cleanup_hook_handle /*handle*/, void* data) {
    auto* self = static_cast<LaneCore*>(data);
    self->env_closing = true;
    if (self->destroyed && self->open_handles == 0) return self->Free();
    self->Destroy();  // Free() removes the hook once the handles are closed
  }
};

class Lane : public Napi::ObjectWrap<Lane> {
 public:
  explicit Lane(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Lane>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsFunction() || !info[1].IsObject()) {
      Napi::TypeError::New(env, "Lane(onHandOff, { keepAliveMs, keepAliveLine, idleMs, headTimeoutMs, onLog })")
          .ThrowAsJavaScriptException();
      return;
    }
    core_ = new (std::nothrow) LaneCore();
    if (core_ == nullptr || !core_->Init(env, info[0])) {
      delete core_;
      core_ = nullptr;
      Napi::Error::New(env, "zcopy: cannot start the native lane").ThrowAsJavaScriptException();
      return;
    }
    Napi::Object options = info[1].As<Napi::Object>();
    core_->keep_alive_ms = options.Get("keepAliveMs").ToNumber().Int64Value();
    core_->idle_ms = options.Get("idleMs").ToNumber().Int64Value();
    Napi::Value head_timeout = options.Get("headTimeoutMs");
    if (head_timeout.IsNumber()) core_->head_timeout_ms = head_timeout.As<Napi::Number>().Int64Value();
    Napi::Value on_log = options.Get("onLog");
    if (on_log.IsFunction()) napi_create_reference(env, on_log, 1, &core_->on_log);  // (left null if it fails)
    Napi::Value line = options.Get("keepAliveLine");
    if (line.IsString()) core_->keep_alive_line = line.As<Napi::String>().Utf8Value();
    Napi::Value lend = options.Get("onLend");
    Napi::Value written = options.Get("onWritten");
    Napi::Value gone = options.Get("onGone");
    Napi::Value body = options.Get("onBody");
    if (lend.IsFunction() && written.IsFunction() && gone.IsFunction() && body.IsFunction()) {
      napi_create_reference(env, lend, 1, &core_->on_lend);
      napi_create_reference(env, written, 1, &core_->on_written);
      napi_create_reference(env, gone, 1, &core_->on_gone);
      napi_create_reference(env, body, 1, &core_->on_body);
    }
  }

  ~Lane() override {
    if (core_ == nullptr) return;
    core_->wrapper_gone = true;
    if (!core_->destroyed) {
      core_->Destroy();
    } else if (core_->open_handles == 0) {
      core_->Free();
    }
  }

  static Napi::Function Class(Napi::Env env) {
    return DefineClass(env, "Lane",
                       {
                           InstanceMethod<&Lane::Listen>("listen"),
                           InstanceMethod<&Lane::Adopt>("adopt"),
                           StaticMethod<&Lane::Bind>("bind"),
                           InstanceMethod<&Lane::Add>("add"),
                           InstanceMethod<&Lane::Forget>("forget"),
                           InstanceMethod<&Lane::Has>("has"),
                           InstanceMethod<&Lane::TakeHits>("takeHits"),
                           InstanceMethod<&Lane::SetBody>("setBody"),
                           InstanceMethod<&Lane::Clear>("clear"),
                           InstanceMethod<&Lane::Stop>("stop"),
                           InstanceMethod<&Lane::Connections>("connections"),
                           InstanceMethod<&Lane::Write>("write"),
                           InstanceMethod<&Lane::SendFile>("sendFile"),
                           InstanceMethod<&Lane::Finish>("finish"),
                           InstanceMethod<&Lane::ReadBody>("readBody"),
                           InstanceMethod<&Lane::Cut>("cut"),
                           InstanceMethod<&Lane::Destroy>("destroy"),
                       });
  }

 private:
  bool Alive(Napi::Env env) {
    if (core_ != nullptr && !core_->destroyed) return true;
    Napi::Error::New(env, "The native lane is closed").ThrowAsJavaScriptException();
    return false;
  }

  Napi::Value Listen(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Alive(env)) return env.Undefined();
    if (!info[0].IsString() || !info[1].IsNumber()) {
      Napi::TypeError::New(env, "listen(address, port, ipv6)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (core_->listen_poll_open) {
      Napi::Error::New(env, "The native lane listens already").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    int port = 0;
    const char* syscall = "";
    int err = core_->Listen(info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::Number>().Int32Value(),
                            info[2].ToBoolean().Value(), &port, &syscall);
    return Listening(env, err, syscall, port);
  }

  // adopt(fd) → the port: the lane accepts from a listening socket this
  // process inherited (a --workers worker; Lane.bind made it in the primary),
  // and owns it from then (not on an error: then it is still the caller's).
  Napi::Value Adopt(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Alive(env)) return env.Undefined();
    if (!info[0].IsNumber() || info[0].As<Napi::Number>().Int32Value() < 0) {
      Napi::TypeError::New(env, "adopt(fd): fd must be a descriptor").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (core_->listen_poll_open) {
      Napi::Error::New(env, "The native lane listens already").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    int port = 0;
    const char* syscall = "";
    int err = core_->AdoptListening(info[0].As<Napi::Number>().Int32Value(), &port, &syscall);
    return Listening(env, err, syscall, port);
  }

  Napi::Value Listening(Napi::Env env, int err, const char* syscall, int port) {
    if (err != 0) {
      napi_value error = SystemError(env, err, syscall);
      if (error != nullptr) napi_throw(env, error);
      return env.Undefined();
    }
    // A lane that listens lives on without a reference from JavaScript (as a
    // listening net.Server does), until destroy().
    if (!referenced_) {
      Ref();
      referenced_ = true;
    }
    return Napi::Number::New(env, port);
  }

  // Lane.bind(address, port, ipv6) → { fd, port }: a listening socket that
  // no lane polls, for a --workers primary to hand to the workers it forks
  // (each adopts it); the caller closes fd. Errors as listen's.
  static Napi::Value Bind(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString() || !info[1].IsNumber()) {
      Napi::TypeError::New(env, "bind(address, port, ipv6)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    UniqueFd fd;
    int port = 0;
    const char* syscall = "";
    int err = LaneCore::BindListening(info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::Number>().Int32Value(),
                                      info[2].ToBoolean().Value(), &fd, &port, &syscall);
    if (err != 0) {
      napi_value error = SystemError(env, err, syscall);
      if (error != nullptr) napi_throw(env, error);
      return env.Undefined();
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("port", Napi::Number::New(env, port));
    out.Set("fd", Napi::Number::New(env, fd.Release()));
    return out;
  }

  // add(method, target, host, acceptEncoding, head, body, file, conditions,
  // source) with target, host and acceptEncoding as latin1 strings (host and
  // acceptEncoding null when not sent), head a Buffer (latin1), body a Buffer
  // or null, file null or { fd, size, mtimeMs, noBody, start, length } (the
  // descriptor is dup()ed; noBody: a 304, which sends no body; start and
  // length, when given: the one range a 206 sends), conditions null or
  // { ifNoneMatch, ifModifiedSince, range } (latin1 strings, null when not
  // sent), and
  // source null or { fd, size, mtimeMs }: the file a compressed variant was
  // made from, checked as the body's own file is; and logCoding, the number
  // (0-31) of the Content-Encoding for the access log (lane-log.js).
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Alive(env)) return env.Undefined();
    if (!info[0].IsString() || !info[1].IsString() || !info[4].IsBuffer()) {
      Napi::TypeError::New(env,
                           "add(method, target, host, acceptEncoding, head, body, file, conditions, source, logCoding)")
          .ThrowAsJavaScriptException();
      return env.Undefined();
    }
    std::string method = info[0].As<Napi::String>().Utf8Value();
    if (method != "GET" && method != "HEAD") {
      Napi::TypeError::New(env, "add(): method must be GET or HEAD").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    // The key as the parser would give it, from a buffer of the six values.
    Napi::Value values[6] = {info[1], info[2], info[3], env.Null(), env.Null(), env.Null()};
    if (info[7].IsObject()) {
      Napi::Object conditions = info[7].As<Napi::Object>();
      values[3] = conditions.Get("ifNoneMatch");
      values[4] = conditions.Get("ifModifiedSince");
      values[5] = conditions.Get("range");
    }
    std::string bytes;
    HeadSpan spans[6];
    for (int i = 0; i < 6; i++) {
      if (!values[i].IsString()) continue;
      std::string text = Latin1(values[i]);
      spans[i].present = true;
      spans[i].offset = static_cast<uint32_t>(bytes.size());
      spans[i].length = static_cast<uint32_t>(text.size());
      bytes += text;
    }
    RowPtr row = RowPtr::Make();
    AnswerKey(&row->key, method == "GET" ? RequestMethod::kGet : RequestMethod::kHead, bytes.data(), spans[0], spans[1],
              spans[2], spans[3], spans[4], spans[5]);
    Napi::Buffer<char> head = info[4].As<Napi::Buffer<char>>();
    row->head.assign(head.Data(), head.Length());
    if (info[5].IsBuffer()) {
      Napi::Buffer<char> body = info[5].As<Napi::Buffer<char>>();
      row->body.assign(body.Data(), body.Length());
      row->in_memory = true;
    }
    if (info[6].IsObject()) {
      Napi::Object file = info[6].As<Napi::Object>();
      int64_t size = 0;
      const Held held = Hold(env, file, &row->file, &row->stat, &size);
      if (held != Held::kOk) return NotAdded(env, held);
      row->has_file = true;
      row->no_body = file.Get("noBody").ToBoolean().Value();
      row->file_size = size;
      if (file.Get("length").IsNumber()) {
        row->file_offset = file.Get("start").ToNumber().Int64Value();
        row->file_size = file.Get("length").ToNumber().Int64Value();
        if (row->file_offset < 0 || row->file_size < 0 || row->file_size > size - row->file_offset) {
          return Napi::Number::New(env, 0);
        }
      }
      if (row->in_memory && (row->no_body || row->body.size() != static_cast<size_t>(row->file_size))) {
        return Napi::Number::New(env, 0);
      }
    } else if (row->in_memory) {
      row->file_size = static_cast<int64_t>(row->body.size());
    }
    if (info[8].IsObject()) {
      int64_t size = 0;
      const Held held = Hold(env, info[8].As<Napi::Object>(), &row->source, &row->source_stat, &size);
      if (held != Held::kOk) return NotAdded(env, held);
      row->has_source = true;
    }
    if (info[9].IsNumber()) row->log_coding = static_cast<uint8_t>(info[9].As<Napi::Number>().Uint32Value() & 31);
    if (!row->has_file && !row->in_memory) return Napi::Number::New(env, 0);
    row->checked_ms = NowMs(core_->loop);
    core_->inotify->Prepare(core_->loop);  // its ring from the first row on, not from the first hit
    return Napi::Number::New(env, core_->table.Add(row));
  }

  enum class Held { kOk, kChanged, kFailed };

  // 0 (not added) for a file that changed; nothing, with the exception
  // pending, for a failure.
  static Napi::Value NotAdded(Napi::Env env, Held held) {
    if (held == Held::kChanged) return Napi::Number::New(env, 0);
    return env.Undefined();
  }

  // The lane's own dup of `file.fd` into *fd, its stat into *stat and the size
  // JavaScript answered for into *size. kFailed: dup or fstat failed (an
  // exception is pending); kChanged: the file changed since the stat
  // JavaScript answered on (the stat differs from the one passed), and is
  // then never registered.
  static Held Hold(Napi::Env env, const Napi::Object& file, UniqueFd* fd, RowStat* stat, int64_t* size) {
    const int copy = ::fcntl(file.Get("fd").ToNumber().Int32Value(), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) {
      napi_value error = SystemError(env, errno, "dup");
      if (error != nullptr) napi_throw(env, error);
      return Held::kFailed;
    }
    *fd = UniqueFd(copy);
    const int stat_error = LaneCore::StatOf(copy, stat);
    if (stat_error != 0) {
      napi_value error = SystemError(env, stat_error, "fstat");
      if (error != nullptr) napi_throw(env, error);
      return Held::kFailed;
    }
    *size = file.Get("size").ToNumber().Int64Value();
    if (*size != stat->size || file.Get("mtimeMs").ToNumber().Int64Value() != stat->mtime_ns / 1000000) {
      return Held::kChanged;
    }
    return Held::kOk;
  }

  static std::string Latin1(const Napi::Value& value) {
    size_t length = 0;
    napi_get_value_string_latin1(value.Env(), value, nullptr, 0, &length);
    std::string out(length, '\0');
    napi_get_value_string_latin1(value.Env(), value, out.data(), length + 1, &length);
    return out;
  }

  Napi::Value Forget(const Napi::CallbackInfo& info) {
    if (core_ != nullptr && info[0].IsNumber()) core_->table.Forget(info[0].As<Napi::Number>().Uint32Value());
    return info.Env().Undefined();
  }

  // Whether the row is still in the table (the lane drops one whose file it
  // finds changed).
  Napi::Value Has(const Napi::CallbackInfo& info) {
    const bool has =
        core_ != nullptr && info[0].IsNumber() && core_->table.Has(info[0].As<Napi::Number>().Uint32Value());
    return Napi::Boolean::New(info.Env(), has);
  }

  // → the ids of the rows that answered since the last call (JavaScript
  // marks their cache entries used, so that a file only the lane sends is
  // not swept from the open-file cache as unused).
  Napi::Value TakeHits(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    RowIds ids;
    if (core_ != nullptr) ids = core_->table.TakeHits();
    Napi::Array out = Napi::Array::New(env, ids.size());
    for (size_t i = 0; i < ids.size(); i++) out.Set(static_cast<uint32_t>(i), Napi::Number::New(env, ids[i]));
    return out;
  }

  // setBody(id, bytes): the file's contents, which the open-file cache came
  // to keep in memory after the row was made (its size checked): the lane
  // then writes head and body at once.
  Napi::Value SetBody(const Napi::CallbackInfo& info) {
    if (core_ == nullptr || !info[0].IsNumber() || !info[1].IsBuffer()) return info.Env().Undefined();
    RowPtr row = core_->table.Get(info[0].As<Napi::Number>().Uint32Value());
    Napi::Buffer<char> bytes = info[1].As<Napi::Buffer<char>>();
    if (row == nullptr || row->in_memory || row->no_body || static_cast<int64_t>(bytes.Length()) != row->file_size) {
      return info.Env().Undefined();
    }
    row->body.assign(bytes.Data(), bytes.Length());
    row->in_memory = true;
    return info.Env().Undefined();
  }

  Napi::Value Clear(const Napi::CallbackInfo& info) {
    if (core_ != nullptr) core_->table.Clear();
    return info.Env().Undefined();
  }

  Napi::Value Stop(const Napi::CallbackInfo& info) {
    if (core_ != nullptr && !core_->destroyed) core_->Stop();
    return info.Env().Undefined();
  }

  Napi::Value Connections(const Napi::CallbackInfo& info) {
    // The lingering ones are answered: a stop waits for none of them.
    return Napi::Number::New(info.Env(),
                             core_ == nullptr ? 0 : static_cast<double>(core_->connections - core_->lingering));
  }

  // write(id, bytes) → 0 (the kernel took them), 1 (onWritten(id) once it
  // has), -1 (the connection is gone): the lent request's answer.
  Napi::Value Write(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsNumber() || !info[1].IsBuffer()) {
      Napi::TypeError::New(env, "write(id, bytes)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    LaneConnection* conn = LentOf(info[0]);
    if (conn == nullptr) return Napi::Number::New(env, -1);
    Napi::Buffer<char> bytes = info[1].As<Napi::Buffer<char>>();
    return Napi::Number::New(env, core_->LentWrite(conn, bytes.Data(), bytes.Length()));
  }

  // sendFile(id, fd, offset, length) → as write(id, bytes): the range of the
  // file as the lent request's body, after what was written before.
  Napi::Value SendFile(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsNumber() || !info[3].IsNumber()) {
      Napi::TypeError::New(env, "sendFile(id, fd, offset, length)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    const int32_t fd = info[1].As<Napi::Number>().Int32Value();
    const int64_t offset = info[2].As<Napi::Number>().Int64Value();
    const int64_t length = info[3].As<Napi::Number>().Int64Value();
    if (fd < 0 || offset < 0 || length < 0) {
      Napi::RangeError::New(env, "sendFile(id, fd, offset, length)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    LaneConnection* conn = LentOf(info[0]);
    if (conn == nullptr) return Napi::Number::New(env, -1);
    return Napi::Number::New(env, core_->LentSendFile(conn, fd, offset, length));
  }

  // finish(id, close): Node's answer is done (all of it written); the
  // connection closes (close) or reads its next request.
  Napi::Value Finish(const Napi::CallbackInfo& info) {
    LaneConnection* conn = LentOf(info[0]);
    if (conn != nullptr) core_->LentDone(conn, info[1].ToBoolean().Value());
    return info.Env().Undefined();
  }

  // readBody(id, on): whether the lane reads the lent request's body now
  // (off while Node's twin holds as much as it takes: its backpressure).
  Napi::Value ReadBody(const Napi::CallbackInfo& info) {
    LaneConnection* conn = LentOf(info[0]);
    if (conn != nullptr && conn->BodyLeft()) {
      conn->body_paused = !info[1].ToBoolean().Value();
      if (conn->waits_writable) {
        core_->WaitWritable(conn);
      } else {
        core_->WatchLent(conn);
      }
    }
    return info.Env().Undefined();
  }

  // cut(id): Node gave up on the answer (destroyed its twin): the
  // connection closes now (onGone says how much of a file range under way
  // went).
  Napi::Value Cut(const Napi::CallbackInfo& info) {
    LaneConnection* conn = LentOf(info[0]);
    if (conn != nullptr) {
      core_->lent.erase(conn->id);
      conn->lent = false;  // JavaScript knows
      core_->Close(conn);
    }
    return info.Env().Undefined();
  }

  LaneConnection* LentOf(const Napi::Value& id) {
    if (core_ == nullptr || core_->destroyed || !id.IsNumber()) return nullptr;
    return core_->LentConnection(id.As<Napi::Number>().Uint32Value());
  }

  Napi::Value Destroy(const Napi::CallbackInfo& info) {
    if (core_ != nullptr) {
      core_->Destroy();
      core_->FlushLog();  // the lines of the answers it cut, and of those before
    }
    if (referenced_) {
      referenced_ = false;
      Unref();
    }
    return info.Env().Undefined();
  }

  LaneCore* core_ = nullptr;
  bool referenced_ = false;
};

}  // namespace

Napi::Function LaneClass(Napi::Env env) {
  return Lane::Class(env);
}

}  // namespace zcopy
