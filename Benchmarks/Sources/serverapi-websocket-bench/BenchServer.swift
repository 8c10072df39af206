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
///   milliseconds, then `end N BYTES`.
enum BenchServer {
    /// Binds to `port` (0: the kernel picks), prints `port N` on standard output, and serves until killed.
    static func run(port: Int) throws -> Never {
        let group = MultiThreadedEventLoopGroup.singleton
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: Wire.maxFrameSize,
            shouldUpgrade: { channel, head in
                channel.eventLoop.makeSucceededFuture(Route(head.uri) == nil ? nil : HTTPHeaders())
            },
            upgradePipelineHandler: { channel, head in
                channel.eventLoop.makeCompletedFuture {
                    // `shouldUpgrade` let only known routes through.
                    let route = Route(head.uri) ?? .echo
                    try channel.pipeline.syncOperations.addHandler(RouteHandler(route))
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

    enum Route: Equatable {
        case echo
        case sink
        case source(size: Int)

        init?(_ uri: String) {
            let parts = uri.split(separator: "?", maxSplits: 1)
            switch parts.first {
            case "/echo": self = .echo
            case "/sink": self = .sink
            case "/source":
                let query = parts.count > 1 ? parts[1] : ""
                guard query.hasPrefix("size="), let size = Int(query.dropFirst(5)), size >= 0 else { return nil }
                self = .source(size: size)
            default: return nil
            }
        }
    }

    /// One connection's route, after the upgrade; on its event loop only.
    final class RouteHandler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        private let route: Route
        private var messages = 0
        private var bytes = 0
        /// The source's payload, shared by every frame it writes (no copy per message).
        private var payload: ByteBuffer?
        private var sending = false
        private var stopRequested = false
        private var closing = false
        /// The text message being received, when it came in fragments.
        private var text = ByteBuffer()
        private var inText = false

        init(_ route: Route) { self.route = route }

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
                if route == .echo { echo(frame, context: context) }
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
            if route == .echo { echo(frame, context: context) }
        }

        /// Writes the frame back (unmasked); `channelReadComplete` flushes.
        private func echo(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
            context.write(
                wrapOutboundOut(WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData)),
                promise: nil)
        }

        private func control(context: ChannelHandlerContext, _ command: String) {
            let words = command.split(separator: " ")
            switch (route, words.first) {
            case (.sink, Substring(Wire.done)):
                sendText(context: context, Wire.count(messages, bytes))
                messages = 0
                bytes = 0
            case (.source(let size), "start"):
                guard !sending, words.count == 2, let milliseconds = Int64(words[1]) else { return }
                if payload == nil {
                    var buffer = context.channel.allocator.buffer(capacity: size)
                    buffer.writeRepeatingByte(Wire.fill, count: size)
                    payload = buffer
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
                context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, data: payload)), promise: nil)
                messages += 1
                bytes += payload.readableBytes
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
}
