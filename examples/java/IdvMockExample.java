// idv-mock from Java 11+: java.net.http.HttpClient and javax.crypto only, no dependency.
//
//   javac -d /tmp/idv IdvMockExample.java && java -cp /tmp/idv IdvMockExample [BASE_URL] [API_KEY]
//
// Reads a page, follows nextpageKey once, PATCHes a submission, and reads a Secure Data
// Transfer project (AES-256-ECB, key = SHA-256 of the API key, PKCS#7, base64). JSON is
// picked apart with regular expressions to stay dependency-free; use your JSON library.
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

public class IdvMockExample {
    // HTTP/1.1: by default the client asks plain-http servers to upgrade to HTTP/2 (h2c),
    // and the mock's server (uvicorn) then drops the request body (see the hint it sends)
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    static SecretKeySpec aesKey(String apiKey) throws Exception {
        byte[] hash = MessageDigest.getInstance("SHA-256").digest(apiKey.getBytes(StandardCharsets.UTF_8));
        return new SecretKeySpec(hash, "AES");
    }

    static String encrypt(String json, String apiKey) throws Exception {
        Cipher cipher = Cipher.getInstance("AES/ECB/PKCS5Padding"); // PKCS#5 = PKCS#7 for AES
        cipher.init(Cipher.ENCRYPT_MODE, aesKey(apiKey));
        return Base64.getEncoder().encodeToString(cipher.doFinal(json.getBytes(StandardCharsets.UTF_8)));
    }

    static String decrypt(String base64, String apiKey) throws Exception {
        Cipher cipher = Cipher.getInstance("AES/ECB/PKCS5Padding");
        cipher.init(Cipher.DECRYPT_MODE, aesKey(apiKey));
        return new String(cipher.doFinal(Base64.getDecoder().decode(base64)), StandardCharsets.UTF_8);
    }

    static String send(String method, String url, String apiKey, String body, String type) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url));
        if (apiKey != null) request.header("x-api-key", apiKey);
        if (type != null) request.header("content-type", type);
        request.method(method, body == null
            ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() >= 400 && response.statusCode() != 409) {
            String hint = response.headers().firstValue("x-idv-mock-hint").orElse("");
            throw new IllegalStateException(method + " " + url + ": " + response.statusCode() + " " + response.body() + " " + hint);
        }
        return response.body();
    }

    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\"([^\"]*)\"").matcher(json);
        return m.find() ? m.group(1) : null;
    }

    static String q(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        String base = args.length > 0 ? args[0] : "http://127.0.0.1:8080/v3";
        String key = args.length > 1 ? args[1] : "mock-api-key";
        String admin = "admin@example.com";

        String page = send("GET", base + "/submission?count=20", key, null, null);
        String nextKey = page.substring(page.indexOf("\"nextpageKey\""));
        String nextId = field(nextKey, "id"), nextDate = field(nextKey, "created_at");
        System.out.println("page 1: nextpageKey " + nextId);
        String page2 = send("GET", base + "/submission?count=20&nextpage_id=" + q(nextId)
            + "&nextpage_date=" + q(nextDate), key, null, null);
        System.out.println("page 2: starts with " + field(page2, "submission_id"));

        String sid = field(page, "submission_id");
        String edit = "{\"submissionId\":\"" + sid + "\",\"admin\":\"" + admin + "\",\"data\":{\"memo\":\"from java\"}}";
        System.out.println("PATCH: " + field(send("PATCH", base + "/submission", key, edit, "application/json"), "message"));

        // mock only: a project with Secure Data Transfer on, and one submission in it
        String origin = base.replaceFirst("/v3$", "");
        String secureKey = "java-secure-key";
        send("POST", origin + "/__admin/projects", null, "{\"project_id\":\"java-secure\",\"api_key\":\""
            + secureKey + "\",\"admins\":[\"" + admin + "\"],\"options\":{\"secure_transfer\":true}}", "application/json");
        String secureSid = field(send("POST", origin + "/__admin/projects/java-secure/submissions", null, "{}", "application/json"), "submission_id");
        String data = encrypt("{\"submission_id\":\"" + secureSid + "\"}", secureKey);
        String answer = send("GET", base + "/submission?data=" + q(data), secureKey, null, null);
        String plain = decrypt(field(answer, "data"), secureKey);
        System.out.println("secure GET: decrypted, submission_id " + (secureSid.equals(field(plain, "submission_id")) ? "matches" : "DIFFERS"));
        System.out.println("done");
    }
}
