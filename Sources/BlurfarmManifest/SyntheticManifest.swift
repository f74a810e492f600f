/// Large valid manifests made up for the parser's benchmark (`blurfarm bench --manifest`) and
/// its performance test.
public enum SyntheticManifest {
    /// A valid manifest just under `bytes` long: many variants with filters, comments,
    /// quoted strings and inline lists, so every part of the lexer is exercised.
    public static func make(bytes limit: Int) -> String {
        var text = "job: big # a large job\ninputs: [photos/**/*.jpg, 'photos/**/*.png', \"raw/\\u{e9}t\\u{e9}/*.tif\"]\nexclude: [photos/private/**]\ntile: 512\noutputs:\n"
        var k = 0
        while true {
            let variant = """
                  - name: variant-\(k)          # comment \(k)
                    path: "out/\(k)/{relpath}/{stem}.webp"
                    filters:
                      - gaussian:
                          sigma: \(Double(k % 97) + 0.5)
                      - motion:
                          radius: \(k % 300)
                          angle: -\(k % 90).25
                          samples: \(k % 50 + 1)
                    edge: mirror
                    colour: linear
                    quality: \(k % 100 + 1)
                    lossless: true
                    resize:
                      width: \(k + 1)
                      fit: inside
                    background: '#1a2b3c'

                """
            if text.utf8.count + variant.utf8.count > limit { break }
            text += variant
            k += 1
        }
        return text
    }
}
