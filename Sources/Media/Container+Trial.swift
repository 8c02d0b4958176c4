import CFFmpeg

/// Whether the muxer's own set-up takes a stream: `avformat_init_output` on
/// a file in memory holding that stream alone. FFmpeg's tag tables (what
/// `avformat_query_codec` reads) name more than some muxers write: movenc
/// lists Opus, FLAC, VP8 and VP9 for MOV, then refuses them in `mov_init`
/// ("opus only supported in MP4", "VP8 muxing is currently not supported").
/// Nothing is written; FFmpeg logs its reason at the level set.
extension Container {
    /// With the stream's own parameters (`codec_tag` cleared, as a copy
    /// sets it): a sample rate, a size or a profile the muxer refuses counts.
    func setUpAccepts(_ parameters: UnsafePointer<AVCodecParameters>) -> Bool? {
        trial { avcodec_parameters_copy($0, parameters) >= 0 }
    }

    /// With plausible parameters for `codec` (an encoder's output, no stream yet); cached.
    func setUpAccepts(_ codec: AVCodecID) -> Bool? {
        let key = "\(muxer)/\(codec.rawValue)"
        if let known = Self.trials.withLock({ $0[key] }) { return known }
        let accepts = trial { p in
            p.pointee.codec_id = codec
            p.pointee.codec_type = avcodec_get_type(codec)
            switch p.pointee.codec_type {
            case AVMEDIA_TYPE_VIDEO:
                (p.pointee.width, p.pointee.height) = (320, 240)
                p.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            case AVMEDIA_TYPE_AUDIO:
                let amr = AMRFrames(codec: codec)
                p.pointee.sample_rate = amr.map { Int32($0.samplesPerFrame) * 50 } ?? 48000
                av_channel_layout_default(&p.pointee.ch_layout, amr == nil ? 2 : 1)
            default: break
            }
            return true
        }
        if let accepts { Self.trials.withLock { $0[key] = accepts } }
        return accepts
    }

    private static let trials = Locked<[String: Bool]>([:])

    /// `nil` when the trial itself cannot be made.
    private func trial(_ fill: (UnsafeMutablePointer<AVCodecParameters>) -> Bool) -> Bool? {
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&ctx, nil, muxer, nil) >= 0, let ctx else { return nil }
        defer {
            ctx.pointee.pb = nil
            avformat_free_context(ctx)
        }
        guard let st = avformat_new_stream(ctx, nil), fill(st.pointee.codecpar) else { return nil }
        st.pointee.codecpar.pointee.codec_tag = 0
        let rate = st.pointee.codecpar.pointee.sample_rate
        st.pointee.time_base = AVRational(num: 1, den: rate > 0 ? rate : 90000)
        guard let memory = try? MemoryOutput(countsOnly: true) else { return nil }
        ctx.pointee.pb = memory.context
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        // Nothing is written: `init` alone (the header is not asked for).
        return withExtendedLifetime(memory) { avformat_init_output(ctx, nil) >= 0 }
    }
}
