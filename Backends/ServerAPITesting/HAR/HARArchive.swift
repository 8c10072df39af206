import Foundation

/// An HTTP Archive (HAR 1.2): the exchanges a `RecordingTransport` wrote and a `ReplayingTransport` answers from.
///
/// The format is the one browsers' developer tools import and export
/// (<http://www.softwareishard.com/blog/har-12-spec/>): a `log` with its `creator` and `entries`, each
/// entry a `request`, a `response`, `cache` and `timings`. What HAR has no field for is kept in fields whose
/// names start with an underscore, as the format allows: a streamed body's chunks (`response._chunks`), a
/// failure (`response._error`), the URL that answered after redirects (`response._url`), a non-text request
/// body (`request.postData._encoding`) and the transport that recorded the entry (`_transport`). A WebSocket is
/// one entry, its handshake, with its messages as Chrome's DevTools export them (`_resourceType` "websocket",
/// `_webSocketMessages`) and how it ended (`_webSocketClose`).
///
/// Decoding is lenient, so that files written by other tools (Chromium, Firefox, Charles, curl's `--libcurl`
/// converters) replay: fields this type does not know are skipped, and required fields that such tools
/// sometimes leave out (`cookies`, `headersSize`, `cache`, ...) take their "unknown" value.
public struct HARArchive: Codable, Sendable, Hashable {
    /// The archive's root object.
    public var log: Log

    /// Creates an archive.
    /// - Parameters:
    ///   - entries: The exchanges, in the order they were recorded.
    ///   - creator: The application that wrote the archive.
    public init(entries: [Entry] = [], creator: Creator = .serverAPIKit) {
        log = Log(creator: creator, entries: entries)
    }

    /// The exchanges, in the order they were recorded.
    public var entries: [Entry] {
        get { log.entries }
        set { log.entries = newValue }
    }

    /// The `log` object: the format's version, who wrote it, and the entries.
    public struct Log: Codable, Sendable, Hashable {
        /// The format's version: "1.2".
        public var version: String
        /// The application that wrote the archive.
        public var creator: Creator
        /// The exchanges, in the order they were recorded.
        public var entries: [Entry]
        /// A comment.
        public var comment: String?

        /// Creates a log.
        public init(version: String = "1.2", creator: Creator, entries: [Entry], comment: String? = nil) {
            self.version = version
            self.creator = creator
            self.entries = entries
            self.comment = comment
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = try container.decode(.version, default: "1.2")
            creator = try container.decode(.creator, default: Creator(name: "", version: ""))
            entries = try container.decode(.entries, default: [])
            comment = try container.decodeIfPresent(.comment)
        }
    }

    /// The application that wrote an archive.
    public struct Creator: Codable, Sendable, Hashable {
        /// Its name.
        public var name: String
        /// Its version.
        public var version: String

        /// Creates a creator.
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }

        /// ServerAPIKit's `ServerAPITesting`.
        public static let serverAPIKit = Creator(name: "ServerAPITesting", version: "1.0")
    }

    /// One exchange: a request and its response (or its failure), with timings.
    public struct Entry: Codable, Sendable, Hashable {
        /// When the request started, as ISO 8601 with milliseconds.
        public var startedDateTime: String
        /// The whole exchange's time, in milliseconds.
        public var time: Double
        /// The request.
        public var request: Request
        /// The response; for a call that got none, status 0 and `error` set.
        public var response: Response
        /// The cache's part (always empty here).
        public var cache: Cache
        /// Where the time went.
        public var timings: Timings
        /// The server's IP address, when known.
        public var serverIPAddress: String?
        /// The connection's id, when known.
        public var connection: String?
        /// A comment.
        public var comment: String?
        /// The name of the transport that recorded the entry (an underscore field).
        public var transport: String?
        /// What the request loaded (`_resourceType`, as Chrome writes it): "websocket" for a WebSocket's handshake;
        /// `nil` when not recorded (a browser writes "fetch", "script", ...).
        public var resourceType: String?
        /// A WebSocket's data messages, both ways, in the order they went (`_webSocketMessages`, as Chrome writes
        /// them); `nil` for an entry that is not a WebSocket.
        public var webSocketMessages: [RecordedMessage]?
        /// How a WebSocket ended (`_webSocketClose`, an underscore field of ours); `nil` while it is open, and for
        /// an entry that is not a WebSocket.
        public var webSocketClose: RecordedClose?

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings, serverIPAddress, connection, comment
            case transport = "_transport"
            case resourceType = "_resourceType"
            case webSocketMessages = "_webSocketMessages"
            case webSocketClose = "_webSocketClose"
        }

        /// Creates an entry.
        public init(
            startedDateTime: String, time: Double, request: Request, response: Response, cache: Cache = Cache(),
            timings: Timings, serverIPAddress: String? = nil, connection: String? = nil, comment: String? = nil,
            transport: String? = nil
        ) {
            self.startedDateTime = startedDateTime
            self.time = time
            self.request = request
            self.response = response
            self.cache = cache
            self.timings = timings
            self.serverIPAddress = serverIPAddress
            self.connection = connection
            self.comment = comment
            self.transport = transport
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            startedDateTime = try container.decode(.startedDateTime, default: "")
            time = try container.decode(.time, default: 0)
            request = try container.decode(Request.self, forKey: .request)
            response = try container.decode(Response.self, forKey: .response)
            cache = try container.decode(.cache, default: Cache())
            timings = try container.decode(.timings, default: Timings())
            serverIPAddress = try container.decodeIfPresent(.serverIPAddress)
            connection = try container.decodeIfPresent(.connection)
            comment = try container.decodeIfPresent(.comment)
            transport = try container.decodeIfPresent(.transport)
            resourceType = try container.decodeIfPresent(.resourceType)
            webSocketMessages = try container.decodeIfPresent(.webSocketMessages)
            webSocketClose = try container.decodeIfPresent(.webSocketClose)
        }
    }

    /// A request as it was sent.
    public struct Request: Codable, Sendable, Hashable {
        /// The method.
        public var method: String
        /// The absolute URL, with its query.
        public var url: String
        /// The HTTP version, such as "HTTP/1.1".
        public var httpVersion: String
        /// The cookies sent.
        public var cookies: [Cookie]
        /// The headers sent.
        public var headers: [NameValue]
        /// The query parameters, decoded.
        public var queryString: [NameValue]
        /// The body, when there is one.
        public var postData: PostData?
        /// The size of the head in bytes; -1 when not known.
        public var headersSize: Int
        /// The size of the body in bytes; -1 when not known.
        public var bodySize: Int

        /// Creates a request.
        public init(
            method: String, url: String, httpVersion: String = "HTTP/1.1", cookies: [Cookie] = [],
            headers: [NameValue] = [], queryString: [NameValue] = [], postData: PostData? = nil,
            headersSize: Int = -1, bodySize: Int = 0
        ) {
            self.method = method
            self.url = url
            self.httpVersion = httpVersion
            self.cookies = cookies
            self.headers = headers
            self.queryString = queryString
            self.postData = postData
            self.headersSize = headersSize
            self.bodySize = bodySize
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            method = try container.decode(String.self, forKey: .method)
            url = try container.decode(String.self, forKey: .url)
            httpVersion = try container.decode(.httpVersion, default: "")
            cookies = try container.decode(.cookies, default: [])
            headers = try container.decode(.headers, default: [])
            queryString = try container.decode(.queryString, default: [])
            postData = try container.decodeIfPresent(.postData)
            headersSize = try container.decodeInteger(.headersSize, default: -1)
            bodySize = try container.decodeInteger(.bodySize, default: -1)
        }
    }

    /// A request body.
    public struct PostData: Codable, Sendable, Hashable {
        /// The body's media type.
        public var mimeType: String
        /// The body as text, or as base64 when `encoding` is "base64".
        public var text: String?
        /// Form fields, as some tools write a form body instead of `text`.
        public var params: [Param]?
        /// "base64" when `text` holds base64 (an underscore field: HAR 1.2 has none for request bodies).
        public var encoding: String?

        enum CodingKeys: String, CodingKey {
            case mimeType, text, params
            case encoding = "_encoding"
        }

        /// Creates a request body.
        public init(mimeType: String, text: String?, params: [Param]? = nil, encoding: String? = nil) {
            self.mimeType = mimeType
            self.text = text
            self.params = params
            self.encoding = encoding
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            mimeType = try container.decode(.mimeType, default: "")
            text = try container.decodeIfPresent(.text)
            params = try container.decodeIfPresent(.params)
            encoding = try container.decodeIfPresent(.encoding)
        }
    }

    /// A posted form field.
    public struct Param: Codable, Sendable, Hashable {
        /// The field's name.
        public var name: String
        /// Its value, for a text field.
        public var value: String?
        /// The file's name, for a file field.
        public var fileName: String?
        /// The file's media type, for a file field.
        public var contentType: String?

        /// Creates a field.
        public init(name: String, value: String?, fileName: String? = nil, contentType: String? = nil) {
            self.name = name
            self.value = value
            self.fileName = fileName
            self.contentType = contentType
        }
    }

    /// A response as it was received; for a call that got none, status 0 and `error` set.
    public struct Response: Codable, Sendable, Hashable {
        /// The status code (0 when no response arrived).
        public var status: Int
        /// The reason phrase.
        public var statusText: String
        /// The HTTP version, such as "HTTP/2".
        public var httpVersion: String
        /// The cookies set.
        public var cookies: [Cookie]
        /// The headers, in order.
        public var headers: [NameValue]
        /// The body.
        public var content: Content
        /// The `Location` header's target, for a redirect; empty otherwise.
        public var redirectURL: String
        /// The size of the head in bytes; -1 when not known.
        public var headersSize: Int
        /// The size of the body as received (before decoding) in bytes; -1 when not known.
        public var bodySize: Int
        /// How a streamed body arrived (an underscore field); `nil` for a body read whole.
        public var chunks: [Chunk]?
        /// Why the call failed (an underscore field): before a response (status 0) or during its body.
        public var error: RecordedError?
        /// The URL that answered, when redirects made it differ from the request's (an underscore field).
        public var finalURL: String?

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize
            case chunks = "_chunks"
            case error = "_error"
            case finalURL = "_url"
        }

        /// Creates a response.
        public init(
            status: Int, statusText: String = "", httpVersion: String = "HTTP/1.1", cookies: [Cookie] = [],
            headers: [NameValue] = [], content: Content = Content(), redirectURL: String = "",
            headersSize: Int = -1, bodySize: Int = -1, chunks: [Chunk]? = nil, error: RecordedError? = nil,
            finalURL: String? = nil
        ) {
            self.status = status
            self.statusText = statusText
            self.httpVersion = httpVersion
            self.cookies = cookies
            self.headers = headers
            self.content = content
            self.redirectURL = redirectURL
            self.headersSize = headersSize
            self.bodySize = bodySize
            self.chunks = chunks
            self.error = error
            self.finalURL = finalURL
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = try container.decodeInteger(.status, default: 0)
            statusText = try container.decode(.statusText, default: "")
            httpVersion = try container.decode(.httpVersion, default: "")
            cookies = try container.decode(.cookies, default: [])
            headers = try container.decode(.headers, default: [])
            content = try container.decode(.content, default: Content())
            redirectURL = try container.decode(.redirectURL, default: "")
            headersSize = try container.decodeInteger(.headersSize, default: -1)
            bodySize = try container.decodeInteger(.bodySize, default: -1)
            chunks = try container.decodeIfPresent(.chunks)
            error = try container.decodeIfPresent(.error)
            finalURL = try container.decodeIfPresent(.finalURL)
        }
    }

    /// A response body.
    public struct Content: Codable, Sendable, Hashable {
        /// The body's length in bytes, after content decoding.
        public var size: Int
        /// The bytes content coding saved (`bodySize` subtracted from `size`), when known.
        public var compression: Int?
        /// The body's media type (the `Content-Type` header's value).
        public var mimeType: String
        /// The body as text, or as base64 when `encoding` is "base64"; `nil` when it was not recorded.
        public var text: String?
        /// "base64" when `text` holds base64.
        public var encoding: String?
        /// A comment.
        public var comment: String?

        /// Creates a body.
        public init(
            size: Int = 0, compression: Int? = nil, mimeType: String = "", text: String? = nil,
            encoding: String? = nil, comment: String? = nil
        ) {
            self.size = size
            self.compression = compression
            self.mimeType = mimeType
            self.text = text
            self.encoding = encoding
            self.comment = comment
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            size = try container.decodeInteger(.size, default: -1)
            compression = try container.decodeInteger(.compression)
            mimeType = try container.decode(.mimeType, default: "")
            text = try container.decodeIfPresent(.text)
            encoding = try container.decodeIfPresent(.encoding)
            comment = try container.decodeIfPresent(.comment)
        }

        /// The body's bytes: `text` decoded from base64 when `encoding` says so (line breaks allowed), else its
        /// UTF-8; empty when `text` is not base64, which an archive read from a file never has (`init(data:name:)`
        /// refuses it).
        public var bytes: Data {
            guard let text else { return Data() }
            if encoding?.lowercased() == "base64" { return HARArchive.base64Bytes(text) ?? Data() }
            return Data(text.utf8)
        }
    }

    /// A name and a value: a header or a query parameter.
    public struct NameValue: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a pair.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A cookie sent or set.
    public struct Cookie: Codable, Sendable, Hashable {
        /// The cookie's name.
        public var name: String
        /// Its value.
        public var value: String
        /// Its path, when set.
        public var path: String?
        /// Its domain, when set.
        public var domain: String?
        /// Whether it is HTTP only, when set.
        public var httpOnly: Bool?
        /// Whether it is secure only, when set.
        public var secure: Bool?

        /// Creates a cookie.
        public init(
            name: String, value: String, path: String? = nil, domain: String? = nil, httpOnly: Bool? = nil,
            secure: Bool? = nil
        ) {
            self.name = name
            self.value = value
            self.path = path
            self.domain = domain
            self.httpOnly = httpOnly
            self.secure = secure
        }
    }

    /// The cache's part of an entry: empty, as no browser cache took part.
    public struct Cache: Codable, Sendable, Hashable {
        /// Creates an empty cache object.
        public init() {}
    }

    /// Where an exchange's time went, in milliseconds; -1 for a phase that does not apply or was not measured.
    public struct Timings: Codable, Sendable, Hashable {
        /// Waiting for a connection.
        public var blocked: Double?
        /// Resolving the host name.
        public var dns: Double?
        /// Making the connection (TCP and TLS).
        public var connect: Double?
        /// Sending the request.
        public var send: Double
        /// Waiting for the response's first byte.
        public var wait: Double
        /// Reading the response.
        public var receive: Double
        /// The TLS handshake (part of `connect`).
        public var ssl: Double?

        /// Creates timings.
        public init(
            blocked: Double? = -1, dns: Double? = -1, connect: Double? = -1, send: Double = 0, wait: Double = 0,
            receive: Double = 0, ssl: Double? = -1
        ) {
            self.blocked = blocked
            self.dns = dns
            self.connect = connect
            self.send = send
            self.wait = wait
            self.receive = receive
            self.ssl = ssl
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            blocked = try container.decodeIfPresent(.blocked)
            dns = try container.decodeIfPresent(.dns)
            connect = try container.decodeIfPresent(.connect)
            send = try container.decode(.send, default: 0)
            wait = try container.decode(.wait, default: 0)
            receive = try container.decode(.receive, default: 0)
            ssl = try container.decodeIfPresent(.ssl)
        }
    }

    /// One chunk of a streamed body, as it arrived (an element of `response._chunks`).
    public struct Chunk: Codable, Sendable, Hashable {
        /// Its length in bytes: the body's text is cut into chunks of these lengths, in order.
        public var size: Int
        /// When it arrived, in milliseconds after the response head.
        public var time: Double

        /// Creates a chunk.
        public init(size: Int, time: Double) {
            self.size = size
            self.time = time
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            size = try container.decodeInteger(.size, default: 0)
            time = try container.decode(.time, default: 0)
        }
    }
}
