import CZlibBench
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The peer both clients talk to: a SwiftNIO WebSocket server on loopback, on a thread per core, working on the
/// event loops without a task per message, so that it costs the clients' runs as little as it can.
///
/// Routes (`Wire` has the control messages):
/// - `/echo`: every data message back, as it came.
/// - `/sink`: counts the data messages and their bytes; `done` answers `count N BYTES` and starts again from 0.
/// - `/source?size=S`: on `start MS`, binary messages of S bytes as fast as the socket takes them for MS
///   milliseconds, then `end N BYTES`; `&json=1`: the messages are `Wire.json(size:)`.
/// - `deflate=1` on a route: permessage-deflate (RFC 7692) when the client offers it, with no context takeover
///   either way, so that every message is compressed alone: the echo sends each frame back as it came (compressed
///   or not), and the source compresses its payload once and sends those bytes each time. The counts are of the
///   messages' uncompressed bytes.
enum BenchServer {
    /// Binds to `port` (0: the kernel picks), prints `port N` on standard output, and serves until killed.
    static func run(port: Int) throws -> Never {
        let group = MultiThreadedEventLoopGroup.singleton
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: Wire.maxFrameSize,
            shouldUpgrade: { channel, head in
                guard let route = Route(head.uri) else { return channel.eventLoop.makeSucceededFuture(nil) }
                var headers = HTTPHeaders()
                if route.deflate, Self.offersDeflate(head) {
                    headers.add(name: "Sec-WebSocket-Extensions", value: Self.deflateAnswer)
                }
                return channel.eventLoop.makeSucceededFuture(headers)
            },
            upgradePipelineHandler: { channel, head in
                channel.eventLoop.makeCompletedFuture {
                    // `shouldUpgrade` let only known routes through.
                    let route = Route(head.uri) ?? Route(kind: .echo)
                    let compressed = route.deflate && Self.offersDeflate(head)
                    try channel.pipeline.syncOperations.addHandler(RouteHandler(route, compressed: compressed))
                }
            })
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 1024)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline(
                    withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            }
            .bind(host: "127.0.0.1", port: port)
            .wait()
        FileHandle.standardOutput.write(Data("port \(channel.localAddress?.port ?? 0)\n".utf8))
        try channel.closeFuture.wait()
        exit(0)
    }

    /// What the server answers an offer of permessage-deflate with on a `deflate=1` route.
    static let deflateAnswer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

    static func offersDeflate(_ head: HTTPRequestHead) -> Bool {
        head.headers["Sec-WebSocket-Extensions"].contains { $0.contains("permessage-deflate") }
    }

    struct Route: Equatable {
        enum Kind: Equatable {
            case echo
            case sink
            case source(size: Int)
        }

        var kind: Kind
        /// The source sends `Wire.json(size:)`.
        var json = false
        /// permessage-deflate is accepted when offered.
        var deflate = false

        init(kind: Kind) { self.kind = kind }

        init?(_ uri: String) {
            let parts = uri.split(separator: "?", maxSplits: 1)
            var query: [Substring: Substring] = [:]
            for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
                let field = pair.split(separator: "=", maxSplits: 1)
                query[field[0]] = field.count > 1 ? field[1] : ""
            }
            switch parts.first {
            case "/echo": kind = .echo
            case "/sink": kind = .sink
            case "/source":
                guard let size = query["size"].flatMap({ Int($0) }), size >= 0 else { return nil }
                kind = .source(size: size)
            default: return nil
            }
            json = query["json"] == "1"
            deflate = query["deflate"] == "1"
        }
    }

    /// One connection's route, after the upgrade; on its event loop only.
    final class RouteHandler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        private let route: Route
        /// permessage-deflate was agreed: the source's messages go compressed.
        private let compressed: Bool
        private var messages = 0
        private var bytes = 0
        /// The source's payload as it goes on the wire (compressed, when agreed), shared by every frame it writes
        /// (no copy per message), and its uncompressed size.
        private var payload: ByteBuffer?
        private var payloadSize = 0
        private var sending = false
        private var stopRequested = false
        private var closing = false
        /// The text message being received, when it came in fragments.
        private var text = ByteBuffer()
        private var inText = false

        init(_ route: Route, compressed: Bool) {
            self.route = route
            self.compressed = compressed
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .binary:
                binary(frame, context: context)
            case .continuation where !inText:
                binary(frame, context: context)
            case .text, .continuation:
                if frame.opcode == .text { text.clear() }
                var data = frame.unmaskedData
                text.writeBuffer(&data)
                inText = !frame.fin
                if route.kind == .echo { echo(frame, context: context) }
                if frame.fin { control(context: context, String(buffer: text)) }
            case .ping:
                let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
                context.write(wrapOutboundOut(pong), promise: nil)
            case .connectionClose:
                guard !closing else { return context.close(promise: nil) }
                closing = true
                // Echoes the code (RFC 6455 §5.5.1), then closes the connection once it is written.
                let answer = WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData)
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(answer)).whenComplete { _ in channel.close(promise: nil) }
            default:
                break
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.flush()
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if context.channel.isWritable, sending { produce(context: context) }
            context.fireChannelWritabilityChanged()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        private func binary(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
            if frame.fin { messages += 1 }
            bytes += frame.length
            if route.kind == .echo { echo(frame, context: context) }
        }

        /// Writes the frame back (unmasked; compressed still when it came so, as no context is kept);
        /// `channelReadComplete` flushes.
        private func echo(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
            context.write(
                wrapOutboundOut(
                    WebSocketFrame(fin: frame.fin, rsv1: frame.rsv1, opcode: frame.opcode, data: frame.unmaskedData)),
                promise: nil)
        }

        private func control(context: ChannelHandlerContext, _ command: String) {
            let words = command.split(separator: " ")
            switch (route.kind, words.first) {
            case (.sink, Substring(Wire.done)):
                sendText(context: context, Wire.count(messages, bytes))
                messages = 0
                bytes = 0
            case (.source(let size), "start"):
                guard !sending, words.count == 2, let milliseconds = Int64(words[1]) else { return }
                if payload == nil {
                    let bytes = route.json ? Wire.json(size: size) : [UInt8](repeating: Wire.fill, count: size)
                    payload = context.channel.allocator.buffer(bytes: compressed ? BenchServer.deflate(bytes) : bytes)
                    payloadSize = size
                }
                messages = 0
                bytes = 0
                sending = true
                stopRequested = false
                let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(milliseconds)) { loopBound.value.stopRequested = true }
                produce(context: context)
            default:
                break
            }
        }

        /// Writes the source's messages while the socket takes them, a batch per turn of the event loop so that
        /// the stop timer runs in between; then, once stopped, `end N BYTES`.
        private func produce(context: ChannelHandlerContext) {
            guard sending, let payload else { return }
            var batch = 0
            while context.channel.isWritable, !stopRequested, batch < 256 {
                context.write(
                    wrapOutboundOut(WebSocketFrame(fin: true, rsv1: compressed, opcode: .binary, data: payload)),
                    promise: nil)
                messages += 1
                bytes += payloadSize
                batch += 1
            }
            context.flush()
            if stopRequested {
                sending = false
                sendText(context: context, Wire.end(messages, bytes))
                return
            }
            if context.channel.isWritable {
                // Lets the loop run the stop timer before the next batch; `channelWritabilityChanged` resumes otherwise.
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.produce(context: context)
                }
            }
        }

        private func sendText(context: ChannelHandlerContext, _ text: String) {
            let buffer = context.channel.allocator.buffer(string: text)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: buffer)), promise: nil)
        }
    }

    /// `bytes` as one permessage-deflate message with no context takeover (RFC 7692 §7.2.1): a raw DEFLATE stream
    /// flushed with `Z_SYNC_FLUSH`, without its last four bytes (00 00 FF FF).
    static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard czlib_bench_deflate_init_raw(&stream) == Z_OK else { fatalError("zlib: deflateInit2 failed") }
        defer { deflateEnd(&stream) }
        var input = bytes
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 16)
        let produced = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                guard CZlibBench.deflate(&stream, Z_SYNC_FLUSH) == Z_OK else { fatalError("zlib: deflate failed") }
                return target.count - Int(stream.avail_out)
            }
        }
        precondition(stream.avail_in == 0 && output[produced - 4..<produced] == [0, 0, 0xFF, 0xFF])
        return Array(output[..<(produced - 4)])
    }
}
