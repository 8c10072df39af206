internal import CCurl

// The C callbacks libcurl calls on the loop thread, from inside curl_multi_socket_action (curl_multi_perform
// where there is no epoll). They are global functions (no captures, so they convert to C function pointers)
// and find their transfer through the unretained context pointer; CurlLoopRunner keeps that transfer alive
// meanwhile.

private func transfer(_ context: UnsafeMutableRawPointer) -> CurlTransfer {
    Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
}

/// CURLOPT_WRITEFUNCTION: body bytes (decoded). Returning less than given stops the transfer.
func curlWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let context else { return 0 }
    guard let data, length > 0 else { return length }
    let transfer = transfer(context)
    // Bytes offered while the stream's reader holds the transfer paused stay with libcurl, which delivers
    // them again once receiving resumes (see CurlTransfer+Streaming).
    if transfer.holdsBackBody { return Int(CURL_WRITEFUNC_PAUSE) }
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// CURLOPT_HEADERFUNCTION: one header line at a time, status lines and blank lines included.
func curlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let context, let data else { return 0 }
    return transfer(context).receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// CURLOPT_READFUNCTION: the next bytes of the request body; 0 at its end.
func curlReadCallback(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let context, let buffer else { return Int(CURL_READFUNC_ABORT) }
    return transfer(context).sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}

/// CURLOPT_TRAILERFUNCTION: the trailer fields after a chunked request body. libcurl frees the list.
func curlTrailerCallback(
    _ list: UnsafeMutablePointer<UnsafeMutablePointer<curl_slist>?>?, _ context: UnsafeMutableRawPointer?
) -> Int32 {
    guard let context, let list else { return Int32(CURL_TRAILERFUNC_ABORT) }
    return transfer(context).sendTrailers(into: list)
}

/// CURLOPT_SEEKFUNCTION: rewinds the request body when libcurl sends it again.
func curlSeekCallback(_ context: UnsafeMutableRawPointer?, _ offset: curl_off_t, _ origin: Int32) -> Int32 {
    guard let context else { return Int32(CURL_SEEKFUNC_FAIL) }
    return transfer(context).rewindBody(to: Int64(offset), origin: origin)
}

/// CURLOPT_XFERINFOFUNCTION: bytes moved so far. Returning non-zero would abort the transfer.
func curlProgressCallback(
    _ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let context else { return 0 }
    transfer(context).reportProgress(
        downloaded: Int64(downloaded), downloadTotal: Int64(downloadTotal), uploaded: Int64(uploaded),
        uploadTotal: Int64(uploadTotal))
    return 0
}
